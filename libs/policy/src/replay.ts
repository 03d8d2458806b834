import type { PolicyEvent } from './events.ts';
import { evolve } from './evolve.ts';
import type { Policy } from './policy.ts';
import { handle, handleCommand } from './react.ts';
import { initialPolicyState, type CustomerPolicyState } from './state.ts';
import type { PolicyDecision, SendCommand } from './types.ts';

/**
 * Rebuilds a customer's state from its event log (or continues from a snapshot). The log holds
 * every PolicyEvent that the decider, react and the operators produced, in order.
 */
export function replay(events: readonly PolicyEvent[], from: CustomerPolicyState | string): CustomerPolicyState {
  const initial = typeof from === 'string' ? initialPolicyState(from) : from;
  return events.reduce(evolve, initial);
}

/** One input of the engine: a send to decide, or a fact (operator action, delivery, opt-out). */
export type PolicyInput = { kind: 'command'; command: SendCommand } | { kind: 'fact'; event: PolicyEvent };

export interface RunResult {
  state: CustomerPolicyState;
  /** Every event to append, in order: the facts themselves and what the engine emitted. */
  log: PolicyEvent[];
  decisions: PolicyDecision[];
}

/**
 * Drives the engine the way the service does: commands are decided and their events folded;
 * facts are folded and reacted to. Feeding the same inputs twice gives deep-equal results, and
 * replay(result.log) gives result.state.
 */
export function run(inputs: readonly PolicyInput[], from: CustomerPolicyState | string, policy: Policy): RunResult {
  let state = typeof from === 'string' ? initialPolicyState(from) : from;
  const log: PolicyEvent[] = [];
  const decisions: PolicyDecision[] = [];
  for (const input of inputs) {
    if (input.kind === 'command') {
      const handled = handleCommand(input.command, state, policy);
      decisions.push(handled.decision);
      log.push(...handled.events);
      state = handled.state;
    } else {
      const handled = handle(state, input.event, policy);
      log.push(input.event, ...handled.emitted);
      state = handled.state;
    }
  }
  return { state, log, decisions };
}
