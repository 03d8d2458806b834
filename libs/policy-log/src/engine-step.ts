import type { AnyEvent } from '@gw/events';
import { handle, handleCommand, type CustomerPolicyState, type Policy, type PolicyDecision, type PolicyEvent, type RecentSendsCache } from '@gw/policy';
import { fromFactRecord } from './facts.ts';
import { toSendCommand } from './decided-event.ts';

export type StepResult =
  | { kind: 'decided'; state: CustomerPolicyState; decision: PolicyDecision; emitted: PolicyEvent[]; folded: PolicyEvent[] }
  | { kind: 'folded'; state: CustomerPolicyState; emitted: PolicyEvent[]; folded: PolicyEvent[] }
  | { kind: 'ignored' };

/**
 * One record of a customer's stream through the engine: a send is decided and its events folded;
 * a policy fact is folded and reacted to. The policy consumer and the compliance replay both use
 * this, so a replay of the log runs exactly the code that made the decisions. `cache` is the
 * caller's (RecentSendsCache): it spares work and changes no decision.
 */
export function engineStep(event: AnyEvent, state: CustomerPolicyState, policy: Policy, cache?: RecentSendsCache): StepResult {
  if (event.type === 'SendRequested') {
    const handled = handleCommand(toSendCommand(event.payload), state, policy, cache);
    // events[0] is the SendDecided fact; anything after it (an automatic pause) is published too.
    return { kind: 'decided', state: handled.state, decision: handled.decision, emitted: handled.events.slice(1), folded: handled.events };
  }
  if (event.type === 'PolicyInputRecorded') {
    const fact = fromFactRecord(event.payload);
    const handled = handle(state, fact, policy);
    return { kind: 'folded', state: handled.state, emitted: handled.emitted, folded: [fact, ...handled.emitted] };
  }
  return { kind: 'ignored' };
}
