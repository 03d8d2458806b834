import type { CustomerPolicyState } from '@gw/policy';

/** What the consumer knows of a partition after writing a batch of it. */
export interface PartitionContext {
  applied: bigint;
  head: string;
  lastLogId: number;
  /** Customer states of this partition as last written (customers are keyed to one partition). */
  states: Map<string, CustomerPolicyState>;
  /** Events in the stored tail of each customer held (none: not known to have a snapshot; its next batch writes one). */
  tailEvents: Map<string, number>;
}

/**
 * The per-partition memory of the policy consumer: valid only while Postgres still shows the
 * offset it holds, which every write checks (policy_apply_batch's fence). States are capped per
 * partition, least recently used out first; a customer not held is read again.
 */
export class PartitionContexts {
  private readonly byPartition = new Map<string, PartitionContext>();

  constructor(private readonly maxStatesPerPartition: number) {}

  get(topic: string, partition: number): PartitionContext | undefined {
    return this.byPartition.get(`${topic}:${partition}`);
  }

  drop(topic: string, partition: number): void {
    this.byPartition.delete(`${topic}:${partition}`);
  }

  /** Records a written batch: the new offset, head and last log id, and the states it used with their tails' lengths. */
  remember(topic: string, partition: number, next: Omit<PartitionContext, 'states' | 'tailEvents'>, states: Map<string, CustomerPolicyState>, tailEvents: ReadonlyMap<string, number>): void {
    const key = `${topic}:${partition}`;
    const context = this.byPartition.get(key) ?? { ...next, states: new Map(), tailEvents: new Map() };
    Object.assign(context, next);
    for (const [customerId, state] of states) {
      context.states.delete(customerId); // re-inserted last: the most recently used
      context.states.set(customerId, state);
    }
    for (const [customerId, events] of tailEvents) context.tailEvents.set(customerId, events);
    for (const oldest of context.states.keys()) {
      if (context.states.size <= this.maxStatesPerPartition) break;
      context.states.delete(oldest);
      context.tailEvents.delete(oldest);
    }
    this.byPartition.set(key, context);
  }
}
