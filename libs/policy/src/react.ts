import { decide, type DecideResult } from './decide.ts';
import type { PolicyEvent } from './events.ts';
import { evolve } from './evolve.ts';
import { reactToRestriction } from './guard/react-guard.ts';
import { carryOverSuppressions } from './linked-suppressions.ts';
import type { Policy } from './policy.ts';
import { autoPauseCheck } from './quality/auto-pause.ts';
import type { CustomerPolicyState } from './state.ts';
import type { SendCommand } from './types.ts';

/**
 * What the engine does after folding an event: a refused send, a failed delivery or an opt-out
 * may tip an instance's quality over its threshold; a suppression or a learned linked id carries
 * over to the numbers and linked ids of the same person; a restriction signal restricts the
 * instance (and may pause it). `state` must already include `event`.
 */
export function react(event: PolicyEvent, state: CustomerPolicyState, policy: Policy): PolicyEvent[] {
  if (event.customerId !== state.customerId) return [];
  switch (event.type) {
    case 'SendDecided':
      return autoPauseCheck(state, event.instanceId, event.at, policy.config);
    case 'DeliveryOutcomeRecorded':
      return event.delivered ? [] : autoPauseCheck(state, event.instanceId, event.at, policy.config);
    case 'RecipientSuppressed': {
      const carried = carryOverSuppressions(event, state);
      const counted = event.source === 'opt_out' && event.instanceId && !event.linkedFrom;
      return counted ? [...carried, ...autoPauseCheck(state, event.instanceId!, event.at, policy.config)] : carried;
    }
    case 'RecipientUnsuppressed':
    case 'RecipientIdentityLinked':
      return carryOverSuppressions(event, state);
    case 'RestrictionSignalled':
      return reactToRestriction(event, state, policy.config);
    default:
      return [];
  }
}

/** A fact through the engine: folded, reacted to, and what it emitted folded too. */
export function handle(state: CustomerPolicyState, event: PolicyEvent, policy: Policy): { state: CustomerPolicyState; emitted: PolicyEvent[] } {
  let next = evolve(state, event);
  const emitted = react(event, next, policy);
  for (const follow of emitted) next = evolve(next, follow);
  return { state: next, emitted };
}

/**
 * A send through the engine: decided, its SendDecided folded and reacted to. `events` is
 * everything to append, in order: the SendDecided, then an automatic pause it tipped over.
 */
export function handleCommand(command: SendCommand, state: CustomerPolicyState, policy: Policy): { decision: DecideResult['decision']; events: PolicyEvent[]; state: CustomerPolicyState } {
  const { decision, events: [decided] } = decide(command, state, policy);
  const handled = handle(state, decided, policy);
  return { decision, events: [decided, ...handled.emitted], state: handled.state };
}
