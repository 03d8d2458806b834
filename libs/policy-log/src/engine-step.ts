import type { AnyEvent } from '@gw/events';
import { handle, handleCommand, type CustomerPolicyState, type Policy, type PolicyDecision, type PolicyEvent, type PolicyEventType } from '@gw/policy';
import { fromFactRecord } from './facts.ts';
import { toSendCommand } from './decided-event.ts';

export type StepResult =
  | { kind: 'decided'; state: CustomerPolicyState; decision: PolicyDecision; emitted: PolicyEvent[]; folded: PolicyEvent[] }
  | { kind: 'folded'; state: CustomerPolicyState; emitted: PolicyEvent[]; folded: PolicyEvent[] }
  | { kind: 'ignored' };

/**
 * The facts the engine folds, by input_type: every policy event type (the compiler keeps this in
 * step with PolicyEvent), the number guard's instance facts from the instance-events ingest
 * included (InstanceConnected, ContactLearned, RestrictionSignalled, RestrictionLifted).
 */
const FOLDED_FACTS: Record<PolicyEventType, true> = {
  CustomerRegistered: true,
  PlanChanged: true,
  ModuleToggled: true,
  LimitsOverridden: true,
  AllowedPurposesChanged: true,
  RecipientSuppressed: true,
  RecipientUnsuppressed: true,
  RecipientIdentityLinked: true,
  InstancePausedForReview: true,
  InstanceResumed: true,
  SendDecided: true,
  DeliveryOutcomeRecorded: true,
  InstanceConnected: true,
  ContactLearned: true,
  RestrictionSignalled: true,
  RestrictionLifted: true,
  InstanceRestricted: true,
};

/**
 * One record of a customer's stream through the engine: a send is decided and its events folded;
 * a policy fact is folded and reacted to. The policy consumer and the compliance replay both use
 * this, so a replay of the log runs exactly the code that made the decisions. A fact of a type
 * this engine does not know (a newer producer's) is ignored, by the consumer and the replay
 * alike, rather than stopping the partition.
 */
export function engineStep(event: AnyEvent, state: CustomerPolicyState, policy: Policy): StepResult {
  if (event.type === 'SendRequested') {
    const handled = handleCommand(toSendCommand(event.payload), state, policy);
    // events[0] is the SendDecided fact; anything after it (an automatic pause) is published too.
    return { kind: 'decided', state: handled.state, decision: handled.decision, emitted: handled.events.slice(1), folded: handled.events };
  }
  if (event.type === 'PolicyInputRecorded') {
    if (!Object.hasOwn(FOLDED_FACTS, event.payload.input_type)) return { kind: 'ignored' };
    const fact = fromFactRecord(event.payload);
    const handled = handle(state, fact, policy);
    // Engine-derived events (an automatic pause, an InstanceRestricted) are published too.
    return { kind: 'folded', state: handled.state, emitted: handled.emitted, folded: [fact, ...handled.emitted] };
  }
  return { kind: 'ignored' };
}
