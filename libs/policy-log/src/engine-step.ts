import type { AnyEvent } from '@gw/events';
import { decide, evolve, handle, type CustomerPolicyState, type PolicyConfig, type PolicyDecision, type PolicyEvent } from '@gw/policy';
import { fromFactRecord } from './facts.ts';
import { toSendCommand } from './decided-event.ts';

export type StepResult =
  | { kind: 'decided'; state: CustomerPolicyState; decision: PolicyDecision; emitted: PolicyEvent[]; folded: PolicyEvent[] }
  | { kind: 'folded'; state: CustomerPolicyState; emitted: PolicyEvent[]; folded: PolicyEvent[] }
  | { kind: 'ignored' };

/**
 * One record of a customer's stream through the engine: a send is decided and its events folded;
 * a policy fact is folded and reacted to. The policy consumer and the compliance replay both use
 * this, so a replay of the log runs exactly the code that made the decisions.
 */
export function engineStep(event: AnyEvent, state: CustomerPolicyState, config?: PolicyConfig): StepResult {
  if (event.type === 'SendRequested') {
    const { decision, events } = decide(toSendCommand(event.payload), state, config);
    const next = events.reduce(evolve, state);
    // events[0] is the SendDecided fact; anything after it (an automatic pause) is published too.
    return { kind: 'decided', state: next, decision, emitted: events.slice(1), folded: events };
  }
  if (event.type === 'PolicyInputRecorded') {
    const fact = fromFactRecord(event.payload);
    const handled = handle(state, fact, config);
    return { kind: 'folded', state: handled.state, emitted: handled.emitted, folded: [fact, ...handled.emitted] };
  }
  return { kind: 'ignored' };
}
