// The compliance replay: customer-events folded through the very engineStep the policy consumer
// runs, so a re-run of the decider can be compared with what the log recorded.
import { createHash } from 'node:crypto';
import type { AnyEvent, EventCodec, SendDecided, SendRequested } from '@gw/events';
import type { KafkaInspector, PartitionRange } from '@gw/kafka';
import { createPolicy, initialPolicyState, RecentSendsCache, type CustomerPolicyState, type Policy, type PolicyDecision, type PolicyEvent } from '@gw/policy';
import { canonicalJson, chainedFields, engineStep, toDecidedEvent } from '@gw/policy-log';
import { yielder } from './progress.ts';

export type ReplayStep =
  | { kind: 'duplicate'; correlationId: string }
  | { kind: 'ignored' }
  | { kind: 'folded'; customerId: string; folded: PolicyEvent[] }
  | { kind: 'decided'; customerId: string; folded: PolicyEvent[]; expected: SendDecided }
  | { kind: 'error'; customerId: string; correlationId: string; error: string };

/**
 * Folds customer streams through engineStep exactly as the policy consumer does
 * (services/policy/src/decide-sends/run-batch.ts): a command decided before is not decided again
 * (the consumer re-emits the recorded decision), a fact folded before (same event id) is not
 * folded again, and every other record is stepped on its customer's state. Records must come in
 * partition order; customers are independent, so partitions may interleave.
 */
export class Replayer {
  readonly states = new Map<string, CustomerPolicyState>();
  private readonly decided = new Set<string>();
  /** Event ids of the facts folded: the consumer folds a copy of a fact (same id) once. */
  readonly foldedFacts = new Set<string>();
  private readonly cache = new RecentSendsCache();

  constructor(private readonly policy: Policy = createPolicy()) {}

  step(event: AnyEvent, partition: number): ReplayStep {
    if (event.type === 'SendRequested' && this.decided.has(event.payload.correlation_id)) return { kind: 'duplicate', correlationId: event.payload.correlation_id };
    if (event.type === 'PolicyInputRecorded' && this.foldedFacts.has(event.payload.event_id)) return { kind: 'ignored' };
    const customerId = event.payload.customer_id;
    const state = this.states.get(customerId) ?? initialPolicyState(customerId);
    let step;
    try {
      step = engineStep(event, state, this.policy, this.cache);
    } catch (error) {
      // The consumer would not have folded it either (it is dead-lettered); the state is kept.
      return { kind: 'error', customerId, correlationId: event.payload.correlation_id, error: (error as Error).message };
    }
    if (step.kind === 'ignored') return { kind: 'ignored' };
    this.states.set(customerId, step.state);
    if (event.type === 'PolicyInputRecorded') this.foldedFacts.add(event.payload.event_id);
    if (step.kind === 'decided' && event.type === 'SendRequested') {
      this.decided.add(event.payload.correlation_id);
      return { kind: 'decided', customerId, folded: step.folded, expected: expectedEntry(event.payload, step.decision, partition, this.policy.version) };
    }
    return { kind: 'folded', customerId, folded: step.folded };
  }

  isDecided(correlationId: string): boolean {
    return this.decided.has(correlationId);
  }
}

/** The entry the consumer would have written for a decision, minus what only the log assigns (ids, hashes). */
export function expectedEntry(command: SendRequested, decision: PolicyDecision, partition: number, policyVersion: string): SendDecided {
  const expected = toDecidedEvent(command, decision, -1, policyVersion);
  expected.partition_chain = partition;
  return expected;
}

/**
 * The fields a re-run of the decider must reproduce: the chained fields but the ids the log
 * assigns (log_id, event_id), and the error text.
 */
export function replayFields(entry: SendDecided) {
  const { log_id: _logId, event_id: _eventId, ...decided } = chainedFields(entry);
  return { ...decided, error_message: entry.error_message ?? null };
}

export const digestOf = (value: unknown): string => createHash('sha256').update(canonicalJson(value)).digest('base64');

/** What to replay, as plain data (it crosses to a worker thread). */
export interface ReplayScope {
  topic: string;
  /** Per partition: [partition, low, end] (decimal strings). */
  ends: Array<[number, string, string]>;
  /** Per partition: the policy consumer's committed offset, or null when it never committed. */
  committed: Array<[number, string | null]>;
  /** Replay these customers only; null: everyone. */
  customers: string[] | null;
  /** Positions (partition@offset) the policy consumer dead-lettered and moved past: skipped as it skipped them. */
  skip: string[];
  /** Commands whose replayed entries are wanted back whole (to describe a divergence). */
  keep?: string[];
}

export interface ReplayOutcome {
  read: number;
  customerEvents: number;
  undecodable: number;
  deadLettered: number;
  duplicateCommands: number;
  /** [command id, digestOf(replayFields), partition, offset, customer id] of every decision, in partition order. */
  decided: Array<[string, string, number, string, string]>;
  /** Commands past the consumer's committed offset: not decided yet, not checked. */
  pending: string[];
  errors: Array<{ eventType: string; correlationId: string; customerId: string; position: string; error: string }>;
  kept: SendDecided[];
}

export const toScopeEnds = (ranges: Map<number, PartitionRange>): ReplayScope['ends'] => [...ranges.values()].map((r) => [r.partition, String(r.low), String(r.end)]);

/** Reads customer-events to the scope's ends and replays the customers in scope, record by record. */
export async function replayCustomerEvents(kafka: KafkaInspector, codec: EventCodec, scope: ReplayScope, progress: (read: number) => void = () => undefined): Promise<ReplayOutcome> {
  const outcome: ReplayOutcome = { read: 0, customerEvents: 0, undecodable: 0, deadLettered: 0, duplicateCommands: 0, decided: [], pending: [], errors: [], kept: [] };
  const replayer = new Replayer();
  const committed = new Map(scope.committed.map(([partition, offset]) => [partition, offset]));
  const ends = new Map(scope.ends.map(([partition, low, end]) => [partition, { partition, low: BigInt(low), end: BigInt(end) }]));
  // Past the committed offset (or the end, when the consumer never committed) commands are pending.
  const limit = (partition: number) => BigInt(committed.get(partition) ?? ends.get(partition)!.end);
  const customers = scope.customers === null ? null : new Set(scope.customers);
  const skip = new Set(scope.skip);
  const keep = new Set(scope.keep ?? []);
  const breathe = yielder();

  await kafka.readToEnd(scope.topic, {
    ends,
    onBatch: async (records, partition) => {
      for (const record of records) {
        outcome.read++;
        const turn = breathe();
        if (turn) await turn;
        if (skip.has(`${partition}@${record.offset}`)) {
          outcome.deadLettered++;
          continue;
        }
        let event: AnyEvent | null;
        try {
          event = await codec.decode(record);
        } catch {
          outcome.undecodable++;
          continue;
        }
        if (!event || (customers && !customers.has(event.payload.customer_id))) continue;
        outcome.customerEvents++;
        if (BigInt(record.offset) >= limit(partition)) {
          if (event.type === 'SendRequested') outcome.pending.push(event.payload.correlation_id);
          continue;
        }
        const step = replayer.step(event, partition);
        if (step.kind === 'duplicate') outcome.duplicateCommands++;
        else if (step.kind === 'error') outcome.errors.push({ eventType: event.type, correlationId: step.correlationId, customerId: step.customerId, position: `${partition}@${record.offset}`, error: step.error });
        else if (step.kind === 'decided') {
          const entry = step.expected;
          outcome.decided.push([entry.correlation_id, digestOf(replayFields(entry)), partition, record.offset, step.customerId]);
          if (keep.has(entry.correlation_id)) outcome.kept.push(entry);
        }
      }
      progress(outcome.read);
    },
  });
  return outcome;
}
