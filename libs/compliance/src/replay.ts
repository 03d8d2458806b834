// The compliance replay: customer-events folded through the very engineStep the policy consumer
// runs, so a re-run of the decider can be compared with what the log recorded.
import { createHash } from 'node:crypto';
import type { AnyEvent, SendDecided, SendRequested } from '@gw/events';
import { createPolicy, initialPolicyState, policyForVersion, type CustomerPolicyState, type Policy, type PolicyDecision, type PolicyEvent } from '@gw/policy';
import { canonicalJson, chainedFields, engineStep, toDecidedEvent } from '@gw/policy-log';

export type ReplayStep =
  | { kind: 'duplicate'; correlationId: string }
  | { kind: 'ignored' }
  | { kind: 'folded'; customerId: string; folded: PolicyEvent[] }
  | {
      kind: 'decided';
      customerId: string;
      folded: PolicyEvent[];
      expected: SendDecided;
      /** The recorded policy version is unknown to this code: the command was decided with the current policy instead. */
      versionMismatch: boolean;
    }
  | { kind: 'error'; customerId: string; correlationId: string; error: string };

/** The policy a recorded version names, or null when this code does not know it. */
export type PolicyVersions = (version: string) => Policy | null;

/**
 * Folds customer streams through engineStep exactly as the policy consumer does
 * (services/policy/src/decide-sends/run-batch.ts): a command decided before is not decided again
 * (the consumer re-emits the recorded decision), a fact folded before (same event id) is not
 * folded again, and every other record is stepped on its customer's state. Records must come in
 * partition order; customers are independent, so partitions may interleave.
 */
export class Replayer {
  readonly states = new Map<string, CustomerPolicyState>();
  /** Commands decided (rebuild, tests); verify says which are repeats itself, from the log. */
  private readonly decided = new Set<string>();
  /** Event ids of the facts folded: the consumer folds a copy of a fact (same id) once. */
  readonly foldedFacts = new Set<string>();

  /** Per partition, the policy of the last recorded version seen there: what the consumer ran then, for the facts between decisions too. */
  private readonly eras = new Map<number, Policy>();
  private readonly byVersion = new Map<string, Policy | null>();

  constructor(
    private readonly policy: Policy = createPolicy(),
    private readonly versions: PolicyVersions = (version) => (version === policy.version ? policy : policyForVersion(version)),
    /** false: the caller tells repeated commands apart (verify, from the log), so no set of every command id is kept. */
    private readonly trackDecided = true,
  ) {}

  /**
   * `recordedVersion`: the policy version the log recorded for this command, when the caller knows
   * it. The command is decided with that version's policy (a log spans policy changes); an unknown
   * version is decided with the current policy and flagged (versionMismatch).
   */
  step(event: AnyEvent, partition: number, recordedVersion?: string): ReplayStep {
    if (event.type === 'SendRequested' && this.decided.has(event.payload.correlation_id)) return { kind: 'duplicate', correlationId: event.payload.correlation_id };
    if (event.type === 'PolicyInputRecorded' && this.foldedFacts.has(event.payload.event_id)) return { kind: 'ignored' };
    const customerId = event.payload.customer_id;
    const state = this.states.get(customerId) ?? initialPolicyState(customerId);
    let versionMismatch = false;
    let policy = this.eras.get(partition) ?? this.policy;
    if (recordedVersion !== undefined && event.type === 'SendRequested' && recordedVersion !== policy.version) {
      // Made once per version (a policy compiles its content rules).
      if (!this.byVersion.has(recordedVersion)) this.byVersion.set(recordedVersion, this.versions(recordedVersion));
      const recorded = this.byVersion.get(recordedVersion)!;
      versionMismatch = recorded === null;
      policy = recorded ?? this.policy;
      this.eras.set(partition, policy);
    }
    let step;
    try {
      step = engineStep(event, state, policy);
    } catch (error) {
      // The consumer would not have folded it either (it is dead-lettered); the state is kept.
      return { kind: 'error', customerId, correlationId: event.payload.correlation_id, error: (error as Error).message };
    }
    if (step.kind === 'ignored') return { kind: 'ignored' };
    this.states.set(customerId, step.state);
    if (event.type === 'PolicyInputRecorded') this.foldedFacts.add(event.payload.event_id);
    if (step.kind === 'decided' && event.type === 'SendRequested') {
      if (this.trackDecided) this.decided.add(event.payload.correlation_id);
      return { kind: 'decided', customerId, folded: step.folded, expected: expectedEntry(event.payload, step.decision, partition, policy.version), versionMismatch };
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

