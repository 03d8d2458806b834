import type { AnyEvent, SendDecided } from '@gw/events';
import type { CustomerPolicyState, Policy, PolicyEvent } from '@gw/policy';
import { engineStep, entryHash, instanceGuardRows, ProjectionChanges, toDecidedEvent, type InstanceGuardRow, type SuppressionOp } from '@gw/policy-log';

/** `offset`: the record the output answers (the handler gives the output that record's trace). */
export type Output = ({ type: 'SendDecided'; payload: SendDecided } | { type: 'PolicyEventEmitted'; event: PolicyEvent; correlationId: string }) & { offset: bigint };


export interface BatchInput {
  /** What the engine decides with (createPolicy, made once by the consumer). */
  policy: Policy;
  decoded: Array<{ offset: bigint; event: AnyEvent }>;
  partition: number;
  /** The partition's next offset whose effect is not yet in Postgres: facts below it are skipped. */
  applied: bigint;
  head: string;
  /** Decisions already in the log, by command id: a repeated command re-emits its decision. */
  recorded: Map<string, SendDecided>;
  /** Event ids of facts folded before (a copy of one at a later offset is not folded again). */
  foldedFacts: ReadonlySet<string>;
  /** Fresh log ids, one per new command, in increasing order. */
  logIds: number[];
  stateOf(customerId: string): CustomerPolicyState;
}

export interface BatchResult {
  outputs: Output[];
  entries: SendDecided[];
  /** The states this batch changed. */
  states: Map<string, CustomerPolicyState>;
  /** The events folded into each changed state, in order: `states` is the stored state with these folded (a tail may store them instead of the state). */
  folded: Map<string, PolicyEvent[]>;
  quota: Map<string, { customerId: string; windowKey: string; used: number }>;
  suppressions: SuppressionOp[];
  /** The number guard of every instance the batch touched, from the states after it (instance_guard). */
  instanceGuard: InstanceGuardRow[];
  head: string;
  lastLogId: number | null;
  /** Event ids of the facts this batch folded. */
  factIds: string[];
  /** What happened to each record, for the metrics once the batch is written. */
  outcomes: Array<{ topic: string; outcome: string }>;
}

/** The fresh command ids of a batch: each SendRequested not decided before, once. */
export function freshCommands(decoded: BatchInput['decoded'], recorded: Map<string, SendDecided>): number {
  const ids = new Set<string>();
  for (const { event } of decoded) if (event.type === 'SendRequested' && !recorded.has(event.payload.correlation_id)) ids.add(event.payload.correlation_id);
  return ids.size;
}

/**
 * Runs one partition's batch through the policy engine in memory: decisions become hash-chained
 * policy-log entries, facts are folded into the customers' states, and what the projections need
 * is collected. Nothing is written here; the caller writes the result in one statement, so a
 * batch that cannot be written leaves no trace.
 */
export function runBatch(input: BatchInput): BatchResult {
  const projections = new ProjectionChanges();
  const result: BatchResult = { outputs: [], entries: [], states: new Map(), folded: new Map(), quota: projections.quota, suppressions: projections.suppressions, instanceGuard: [], head: input.head, lastLogId: null, factIds: [], outcomes: [] };
  const recorded = new Map(input.recorded);
  const foldedFacts = new Set(input.foldedFacts);
  let nextId = 0;
  const stateOf = (customerId: string) => result.states.get(customerId) ?? input.stateOf(customerId);

  for (const { offset, event } of input.decoded) {
    if (event.type === 'SendRequested') {
      const known = recorded.get(event.payload.correlation_id);
      if (known) {
        result.outcomes.push({ topic: 'send-requested', outcome: 'redelivered' });
        // The stored copy keeps no message body; the command still has it.
        const dispatch = known.dispatch ? { ...known.dispatch, text: event.payload.message } : null;
        result.outputs.push({ type: 'SendDecided', payload: { ...known, dispatch }, offset });
        continue;
      }
    } else if (offset < input.applied) {
      continue; // a fact whose effect is already in the projections
    } else if (event.type === 'PolicyInputRecorded') {
      if (foldedFacts.has(event.payload.event_id)) {
        result.outcomes.push({ topic: 'policy-input', outcome: 'repeated' });
        continue; // a copy of a fact folded before (its source re-emitted it)
      }
      foldedFacts.add(event.payload.event_id);
      result.factIds.push(event.payload.event_id);
    }

    const step = engineStep(event, stateOf(event.payload.customer_id), input.policy);
    if (step.kind === 'ignored') continue;
    result.states.set(event.payload.customer_id, step.state);
    const folded = result.folded.get(event.payload.customer_id) ?? [];
    folded.push(...step.folded);
    result.folded.set(event.payload.customer_id, folded);
    for (const event of step.folded) projections.add(event);

    if (step.kind === 'decided' && event.type === 'SendRequested') {
      const logId = input.logIds[nextId++];
      if (logId === undefined) throw new Error('runBatch: fewer log ids than new commands');
      const entry = toDecidedEvent(event.payload, step.decision, logId, input.policy.version);
      entry.partition_chain = input.partition;
      entry.prev_hash = result.head;
      entry.entry_hash = entryHash(result.head, entry);
      result.head = entry.entry_hash;
      result.lastLogId = entry.log_id;
      result.entries.push(entry);
      // A repeat of this command later in the same batch re-emits this decision.
      recorded.set(entry.correlation_id, entry);
      result.outputs.push({ type: 'SendDecided', payload: entry, offset });
      result.outcomes.push({ topic: 'send-requested', outcome: entry.decision });
    }
    for (const emitted of step.emitted) result.outputs.push({ type: 'PolicyEventEmitted', event: emitted, correlationId: event.payload.correlation_id, offset });
  }
  result.instanceGuard = instanceGuardRows(projections.touched, (customerId) => result.states.get(customerId), input.policy);
  return result;
}
