import { DEFAULT_POLICY_CONFIG, type PolicyConfig } from './config/policy-config.ts';
import type { PolicyEvent } from './events.ts';
import { evolve } from './evolve.ts';
import { autoPauseCheck } from './quality/auto-pause.ts';
import type { CustomerPolicyState } from './state.ts';

/**
 * What the engine does after a fact that is not a send command: a failed delivery or an opt-out
 * may tip an instance's quality over its threshold. `state` must already include `event`
 * (state = evolve(state, event) first). SendDecided gets nothing here: decide already checked it.
 */
export function react(event: PolicyEvent, state: CustomerPolicyState, config: PolicyConfig = DEFAULT_POLICY_CONFIG): PolicyEvent[] {
  if (event.customerId !== state.customerId) return [];
  switch (event.type) {
    case 'DeliveryOutcomeRecorded':
      return event.delivered ? [] : autoPauseCheck(state, event.instanceId, event.at, config);
    case 'RecipientSuppressed':
      return event.source === 'opt_out' && event.instanceId ? autoPauseCheck(state, event.instanceId, event.at, config) : [];
    default:
      return [];
  }
}

/** Evolve then react, folding what react emitted: the one-stop handler for non-command facts. */
export function handle(state: CustomerPolicyState, event: PolicyEvent, config: PolicyConfig = DEFAULT_POLICY_CONFIG): { state: CustomerPolicyState; emitted: PolicyEvent[] } {
  let next = evolve(state, event);
  const emitted = react(event, next, config);
  for (const follow of emitted) next = evolve(next, follow);
  return { state: next, emitted };
}
