import type { AnyEvent, SendDecided } from '@gw/events';
import { initialPolicyState, POLICY_VERSION, type CustomerPolicyState, type PolicyEvent } from '@gw/policy';
import { engineStep, toDecidedEvent } from '@gw/policy-log';

export type ReplayStep =
  | { kind: 'duplicate'; correlationId: string }
  | { kind: 'ignored' }
  | { kind: 'folded'; customerId: string; folded: PolicyEvent[] }
  | { kind: 'decided'; customerId: string; folded: PolicyEvent[]; expected: SendDecided }
  | { kind: 'error'; customerId: string; correlationId: string; error: string };

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

  step(event: AnyEvent, partition: number): ReplayStep {
    if (event.type === 'SendRequested' && this.decided.has(event.payload.correlation_id)) return { kind: 'duplicate', correlationId: event.payload.correlation_id };
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
    if (step.kind === 'decided' && event.type === 'SendRequested') {
      this.decided.add(event.payload.correlation_id);
      // The entry the consumer would have written, minus what only the log assigns (ids, hashes).
      // The decider's SendDecided carries the body's digest: no need to hash the body again.
      const decided = step.folded[0];
      const expected = toDecidedEvent(event.payload, step.decision, -1, POLICY_VERSION, decided?.type === 'SendDecided' ? decided.digest : undefined);
      expected.partition_chain = partition;
      return { kind: 'decided', customerId, folded: step.folded, expected };
    }
    return { kind: 'folded', customerId, folded: step.folded };
  }

  /** Whether the replay has decided this command already (a repeated SendRequested is skipped). */
  isDecided(correlationId: string): boolean {
    return this.decided.has(correlationId);
  }
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
