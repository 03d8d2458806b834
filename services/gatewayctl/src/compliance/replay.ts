import type { AnyEvent, SendDecided, SendRequested } from '@gw/events';
import { initialPolicyState, messageDigest, POLICY_VERSION, type CustomerPolicyState, type PolicyDecision, type PolicyEvent } from '@gw/policy';
import { engineStep, toDecidedEvent } from '@gw/policy-log';

export type ReplayStep =
  | { kind: 'duplicate'; correlationId: string }
  | { kind: 'ignored' }
  | { kind: 'folded'; customerId: string; folded: PolicyEvent[] }
  | { kind: 'decided'; customerId: string; folded: PolicyEvent[]; expected: SendDecided }
  | { kind: 'error'; customerId: string; correlationId: string; error: string };

/** A step without the entry built: what the decider decided on the command, and the body's digest. */
export type ReplayAdvance =
  | Exclude<ReplayStep, { kind: 'decided' }>
  | { kind: 'decided'; customerId: string; folded: PolicyEvent[]; command: SendRequested; decision: PolicyDecision; digest: string };

/**
 * Folds customer streams through engineStep exactly as the policy consumer does
 * (services/policy/src/decide-sends/handler.ts): a SendRequested whose command was decided before
 * is not decided or folded again (the consumer re-emits the recorded decision); every other record
 * is stepped on its customer's state, starting from the initial state. Records must be fed in
 * partition order; customers are independent, so partitions may interleave.
 */
export class Replayer {
  readonly states = new Map<string, CustomerPolicyState>();
  private readonly decided = new Set<string>();
  /** Event ids of the facts folded: the consumer folds a copy of a fact (same id) once. */
  readonly foldedFacts = new Set<string>();

  step(event: AnyEvent, partition: number): ReplayStep {
    const step = this.advance(event);
    if (step.kind !== 'decided') return step;
    return { kind: 'decided', customerId: step.customerId, folded: step.folded, expected: expectedEntry(step.command, step.decision, step.digest, partition) };
  }

  /** step, minus building the entry the consumer would have written (the replay of verify digests the decision directly). */
  advance(event: AnyEvent): ReplayAdvance {
    if (event.type === 'SendRequested' && this.decided.has(event.payload.correlation_id)) return { kind: 'duplicate', correlationId: event.payload.correlation_id };
    if (event.type === 'PolicyInputRecorded' && this.foldedFacts.has(event.payload.event_id)) return { kind: 'ignored' };
    const customerId = event.payload.customer_id;
    const state = this.states.get(customerId) ?? initialPolicyState(customerId);
    let step;
    try {
      step = engineStep(event, state);
    } catch (error) {
      // The consumer would retry this record for ever; the replay reports it and keeps the state.
      return { kind: 'error', customerId, correlationId: event.payload.correlation_id, error: (error as Error).message };
    }
    if (step.kind === 'ignored') return { kind: 'ignored' };
    this.states.set(customerId, step.state);
    if (event.type === 'PolicyInputRecorded') this.foldedFacts.add(event.payload.event_id);
    if (step.kind === 'decided' && event.type === 'SendRequested') {
      this.decided.add(event.payload.correlation_id);
      // The decider's SendDecided carries the body's digest: no need to hash the body again.
      const decided = step.folded[0];
      const digest = decided?.type === 'SendDecided' ? decided.digest : messageDigest(event.payload.message);
      return { kind: 'decided', customerId, folded: step.folded, command: event.payload, decision: step.decision, digest };
    }
    return { kind: 'folded', customerId, folded: step.folded };
  }

  /** Whether the replay has decided this command already (a repeated SendRequested is skipped). */
  isDecided(correlationId: string): boolean {
    return this.decided.has(correlationId);
  }
}

/** The entry the consumer would have written for a decision, minus what only the log assigns (ids, hashes). */
export function expectedEntry(command: SendRequested, decision: PolicyDecision, digest: string, partition: number): SendDecided {
  const expected = toDecidedEvent(command, decision, -1, POLICY_VERSION, digest);
  expected.partition_chain = partition;
  return expected;
}

/** The fields a re-run of the decider must reproduce (everything but log ids, event ids and hashes). */
export function replayFields(entry: SendDecided) {
  return {
    correlation_id: entry.correlation_id,
    customer_id: entry.customer_id,
    instance_id: entry.instance_id,
    message_id: entry.message_id,
    occurred_at: entry.occurred_at,
    recipient: entry.recipient,
    message_purpose: entry.message_purpose,
    message_digest: entry.message_digest,
    decision: entry.decision,
    error_code: entry.error_code ?? null,
    error_message: entry.error_message ?? null,
    reasons: entry.reasons.map((r) => ({ rule: r.rule, outcome: r.outcome, detail: r.detail ?? null })),
    policy_version: entry.policy_version,
    partition_chain: entry.partition_chain,
  };
}
