import { describe, expect, it } from 'vitest';
import { createPolicy } from '../policy.ts';
import { run, type PolicyInput } from '../replay.ts';
import { activeCustomer, CUSTOMER, DAY, HOUR, INSTANCE, T0 } from '../testing/fixtures.ts';
import { connected, newContacts, signalled } from './fixtures.ts';
import { guardSummary } from './summary.ts';

const POLICY = createPolicy();
const stateAfter = (inputs: PolicyInput[]) => run(inputs, CUSTOMER, POLICY).state;
const facts = (...events: ReturnType<typeof connected>[]): PolicyInput[] => events.map((event) => ({ kind: 'fact', event }));
const sends = (n: number, from: number): PolicyInput[] => newContacts(n, from, 7_000).map((command) => ({ kind: 'command', command }));

describe('guardSummary', () => {
  it('shows a new instance: its age, the warm-up allowance today, first contacts made and left, no restriction', () => {
    const state = stateAfter([...facts(...activeCustomer(), connected(T0 - 3 * DAY - HOUR)), ...sends(12, T0)]);
    expect(guardSummary(state, INSTANCE, T0 + HOUR, POLICY)).toEqual({
      firstConnectedAt: T0 - 3 * DAY - HOUR,
      ageDays: 3,
      warmUpAllowanceToday: 200, // day 3's step
      firstContactLimitToday: 200,
      firstContactsToday: 12,
      firstContactsLeftToday: 188,
      restrictedUntil: null,
      restrictionSignal: null,
      signals: 0,
    });
  });

  it('shows an established instance (no warm-up) under restriction, and the restriction gone after its end', () => {
    const state = stateAfter([...facts(...activeCustomer('growth')), ...sends(3, T0), ...facts(signalled('send_error', T0 + HOUR))]);
    expect(guardSummary(state, INSTANCE, T0 + HOUR + 1, POLICY)).toMatchObject({
      firstConnectedAt: null, ageDays: null, warmUpAllowanceToday: null, firstContactLimitToday: 500, firstContactsToday: 3, firstContactsLeftToday: 497,
      restrictedUntil: T0 + 2 * HOUR, restrictionSignal: 'send_error', signals: 1,
    });
    expect(guardSummary(state, INSTANCE, T0 + 2 * HOUR, POLICY)).toMatchObject({ restrictedUntil: null, restrictionSignal: null, signals: 1 });
    expect(guardSummary(state, INSTANCE, T0 + 2 * DAY, POLICY)).toMatchObject({ firstContactsToday: 0, signals: 0 });
  });

  it('an instance the engine never heard of has nothing; without a plan there is no limit', () => {
    const state = stateAfter([]);
    expect(guardSummary(state, 'ins_unknown', T0, POLICY)).toEqual({
      firstConnectedAt: null, ageDays: null, warmUpAllowanceToday: null, firstContactLimitToday: null, firstContactsToday: 0, firstContactsLeftToday: null,
      restrictedUntil: null, restrictionSignal: null, signals: 0,
    });
  });
});
