// No test framework here: the specification asserts with node:assert, so it lives in src beside
// the decider and any runner (vitest, node --test, a benchmark's sanity check) can use it.
import assert from 'node:assert/strict';
import type { ErrorCode } from '@gw/contract';
import { DEFAULT_POLICY_CONFIG, type PolicyConfig } from '../config/policy-config.ts';
import type { InstancePausedForReview, PolicyEvent, SendDecided } from '../events.ts';
import { createPolicy } from '../policy.ts';
import { handle, handleCommand } from '../react.ts';
import { replay } from '../replay.ts';
import type { CustomerPolicyState } from '../state.ts';
import type { PolicyDecision, SendCommand } from '../types.ts';
import { CUSTOMER } from './fixtures.ts';

/** Some of the fields of a value, at any depth; arrays keep their length, their items are partial. */
export type Fields<T> = T extends readonly (infer Item)[] ? Fields<Item>[] : T extends object ? { [K in keyof T]?: Fields<T[K]> } : T;

/** An event the spec expects: its type, and the fields the spec is about (the others are not compared). */
export type ExpectedEvent = { [Type in PolicyEvent['type']]: Fields<Extract<PolicyEvent, { type: Type }>> & { type: Type } }[PolicyEvent['type']];

/** What happened when the `when` inputs ran: every decision, every emitted event, the final state. */
export interface Outcome {
  /** One per command: what the customer is answered (the code and details of a refusal, every rule's record). */
  decisions: PolicyDecision[];
  /** Everything decide/react emitted, in append order (facts given to whenFact are not repeated here). */
  events: PolicyEvent[];
  state: CustomerPolicyState;
}

export interface Then {
  /**
   * The emitted events are exactly `expected`, in order; each expected event names the fields it
   * is about (`accepted()`, `rejected(code)`, `autoPaused()` build the usual ones).
   */
  then(expected: ExpectedEvent[]): Asserted;
  /** The inputs are refused with an error (a caller's bug, not a policy outcome) whose message contains or matches `message`. */
  thenThrows(message: RegExp | string): void;
}

export interface Asserted {
  outcome: Outcome;
  /** The last decision's refusal details (the API's `details`) contain these. */
  withDetails(details: Record<string, unknown>): Outcome;
}

/** An accepted send's SendDecided (no error code, no violation reason), plus whichever fields matter. */
export const accepted = (fields: Fields<SendDecided> = {}): ExpectedEvent => ({ type: 'SendDecided', decision: 'accepted', errorCode: null, reason: null, ...fields });

/**
 * A refused send's SendDecided: its error code, no token taken, and the violation `reason` (only a
 * policy_violation carries one; pass it in `fields`).
 */
export const rejected = (errorCode: ErrorCode, fields: Fields<SendDecided> = {}): ExpectedEvent => ({
  type: 'SendDecided', decision: 'rejected', errorCode, tokensLeft: null, ...(errorCode === 'policy_violation' ? {} : { reason: null }), ...fields,
});

/** The automatic pause for review the quality check emits. */
export const autoPaused = (fields: Fields<InstancePausedForReview> = {}): ExpectedEvent => ({ type: 'InstancePausedForReview', by: 'auto', ...fields });

/** `n` copies of one expectation (n sends decided alike). */
export const times = (n: number, expected: ExpectedEvent): ExpectedEvent[] => Array.from({ length: n }, () => expected);

/**
 * Decider specification in the emmett style (event-driven-io/emmett `DeciderSpecification`):
 *   given([...events]).when(command).then([...events]) / .thenThrows(...)
 *   given([...events]).whenFact(fact).then([...events])
 * `when` takes one command or a list decided in sequence, through the engine as the policy
 * consumer runs it (handleCommand: each SendDecided folded and reacted to before the next);
 * `whenFact` feeds non-command facts through evolve + react (handle).
 */
export function given(events: PolicyEvent[], options: { config?: PolicyConfig; customerId?: string } = {}) {
  const policy = createPolicy(options.config ?? DEFAULT_POLICY_CONFIG);
  const initial = replay(events, options.customerId ?? CUSTOMER);

  const then = (run: () => Outcome): Then => ({
    then(expected) {
      const outcome = run();
      assert.deepStrictEqual(picked(outcome.events, expected), expected);
      return {
        outcome,
        withDetails(details) {
          const last = outcome.decisions.at(-1);
          assert.ok(last?.decision === 'rejected', 'the last decision is not a refusal');
          assert.deepStrictEqual(picked(last.details, details), details);
          return outcome;
        },
      };
    },
    thenThrows(message) {
      assert.throws(run, typeof message === 'string' ? (error: unknown) => error instanceof Error && error.message.includes(message) : message);
    },
  });

  return {
    state: initial,
    when(commands: SendCommand | SendCommand[]): Then {
      return then(() => {
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
      return then(() => {
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

/**
 * `actual` cut down to the shape of `expected` (the keys it names, arrays of the same length), so
 * one deepStrictEqual compares only what the spec is about and its diff shows only that. A key
 * the actual value lacks stays absent, and so fails the comparison.
 */
function picked(actual: unknown, expected: unknown): unknown {
  if (Array.isArray(expected)) {
    return Array.isArray(actual) && actual.length === expected.length ? actual.map((item, i) => picked(item, expected[i])) : actual;
  }
  if (isRecord(expected) && isRecord(actual)) {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(expected)) if (key in actual) out[key] = picked(actual[key], expected[key]);
    return out;
  }
  return actual;
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
