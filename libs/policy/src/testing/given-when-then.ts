import { expect } from 'vitest';
import { DEFAULT_POLICY_CONFIG, type PolicyConfig } from '../config/policy-config.ts';
import type { PolicyEvent } from '../events.ts';
import { createPolicy } from '../policy.ts';
import { handle, handleCommand } from '../react.ts';
import { replay } from '../replay.ts';
import type { CustomerPolicyState } from '../state.ts';
import type { PolicyDecision, SendCommand } from '../types.ts';
import { CUSTOMER } from './fixtures.ts';

/** What happened when the `when` inputs ran: every decision, every emitted event, the final state. */
export interface Outcome {
  decisions: PolicyDecision[];
  /** Everything decide/react emitted (facts given to whenFact are not repeated here). */
  events: PolicyEvent[];
  state: CustomerPolicyState;
}

type Then = {
  /** The emitted events, exactly. */
  then(expected: PolicyEvent[]): void;
  /** The last decision is accepted. */
  thenAccepted(): Outcome;
  /** The last decision is refused with this code (and details containing `details`). */
  thenRejected(code: string, details?: Record<string, unknown>): Outcome;
  /** Free-form assertions on everything that happened. */
  thenOutcome(assert: (outcome: Outcome) => void): void;
  thenThrows(message: RegExp | string): void;
};

/**
 * Decider specification in the emmett style:
 *   given([...events]).when(command).then([...events]) / .thenRejected(code, details) / .thenThrows(...)
 * `when` takes one command or a list decided in sequence (each one's events folded before the
 * next); `whenFact` feeds a non-command fact through evolve + react.
 */
export function given(events: PolicyEvent[], options: { config?: PolicyConfig; customerId?: string } = {}) {
  const policy = createPolicy(options.config ?? DEFAULT_POLICY_CONFIG);
  const initial = replay(events, options.customerId ?? CUSTOMER);

  const outcomeOf = (run: () => Outcome): Then => {
    const result = (): Outcome => run();
    const last = (outcome: Outcome): PolicyDecision => {
      const decision = outcome.decisions.at(-1);
      if (!decision) throw new Error('no command was decided');
      return decision;
    };
    return {
      then: (expected) => expect(result().events).toEqual(expected),
      thenAccepted: () => {
        const outcome = result();
        expect(last(outcome)).toMatchObject({ decision: 'accepted' });
        return outcome;
      },
      thenRejected: (code, details = {}) => {
        const outcome = result();
        expect(last(outcome)).toMatchObject({ decision: 'rejected', code, details });
        return outcome;
      },
      thenOutcome: (assert) => assert(result()),
      thenThrows: (message) => expect(result).toThrow(message),
    };
  };

  return {
    state: initial,
    when(commands: SendCommand | SendCommand[]): Then {
      return outcomeOf(() => {
        let state = initial;
        const decisions: PolicyDecision[] = [];
        const emitted: PolicyEvent[] = [];
        for (const command of Array.isArray(commands) ? commands : [commands]) {
          const handled = handleCommand(command, state, policy);
          decisions.push(handled.decision);
          emitted.push(...handled.events);
          state = handled.state;
        }
        return { decisions, events: emitted, state };
      });
    },
    whenFact(facts: PolicyEvent | PolicyEvent[]): Then {
      return outcomeOf(() => {
        let state = initial;
        const emitted: PolicyEvent[] = [];
        for (const fact of Array.isArray(facts) ? facts : [facts]) {
          const handled = handle(state, fact, policy);
          emitted.push(...handled.emitted);
          state = handled.state;
        }
        return { decisions: [], events: emitted, state };
      });
    },
  };
}
