import { describe, expect, it } from 'vitest';
import { DEFAULT_POLICY_CONFIG, type PolicyConfig } from '../config/policy-config.ts';
import type { PolicyEvent } from '../events.ts';
import { activeCustomer, aSend, CUSTOMER, distinctSends, HOUR, T0 } from '../testing/fixtures.ts';
import { accepted, given, rejected, times } from '../testing/given-when-then.ts';

const DAY_START = Date.UTC(2026, 10, 22);
const override = (limits: Partial<Pick<Extract<PolicyEvent, { type: 'LimitsOverridden' }>, 'daily' | 'monthly'>>): PolicyEvent => ({
  type: 'LimitsOverridden', customerId: CUSTOMER, at: T0 - HOUR, ...limits, grantedBy: 'reviewer.bob', reason: 'ticket 42: clinic reminders',
});

describe('daily_limit (starter: 100 a day)', () => {
  it('when limit + 5 sends are decided in sequence, then exactly the limit succeed and the rest get 429', () => {
    given(activeCustomer())
      .when(distinctSends(105, DAY_START + HOUR, 7_000))
      .then([...times(100, accepted({ quotaWindows: { day: '2026-11-22' } })), ...times(5, rejected('daily_message_limit_exceeded'))])
      .withDetails({ rule: 'daily_limit', limit: 100, used: 100, window: '2026-11-22', resets_at: '2026-11-23T00:00:00.000Z' });
  });

  it('counts accepted sends only: refused sends do not use the quota', () => {
    const refused = distinctSends(150, DAY_START + HOUR, 7_000, { purpose: 'marketing' });
    given(activeCustomer()).when([...refused, aSend({ occurredAt: DAY_START + 20 * HOUR })]).then([...times(150, rejected('message_purpose_not_allowed')), accepted()]);
  });

  it('resets at the UTC day boundary', () => {
    const full = distinctSends(100, DAY_START + HOUR, 7_000);
    const lateToday = aSend({ occurredAt: DAY_START + 24 * HOUR - 1 });
    const tomorrow = aSend({ occurredAt: DAY_START + 24 * HOUR, recipient: '+14155550999' });
    const spec = given(activeCustomer());
    spec.when([...full, lateToday]).then([...times(100, accepted()), rejected('daily_message_limit_exceeded')]);
    const { state } = spec
      .when([...full, lateToday, tomorrow])
      .then([...times(100, accepted()), rejected('daily_message_limit_exceeded'), accepted({ quotaWindows: { day: '2026-11-23' } })]).outcome;
    expect(state.quota.day).toEqual({ window: '2026-11-23', used: 1 });
  });

  it('given an override granted after review, then the override wins over the plan', () => {
    // 37 s apart: fewer than 100 first contacts in any hour, under Starter's first-contact cap.
    given([...activeCustomer(), override({ daily: 150 })])
      .when(distinctSends(152, DAY_START + HOUR, 37_000))
      .then([...times(150, accepted()), ...times(2, rejected('daily_message_limit_exceeded'))])
      .withDetails({ limit: 150, override_granted_by: 'reviewer.bob' });
  });

  it('given an empty override, then it withdraws the earlier one', () => {
    const withdraw: PolicyEvent = { type: 'LimitsOverridden', customerId: CUSTOMER, at: T0 - 1, grantedBy: 'reviewer.bob', reason: 'review ended' };
    given([...activeCustomer(), override({ daily: 1 }), withdraw]).when(distinctSends(2, DAY_START + HOUR, 7_000)).then(times(2, accepted()));
  });

  it('given a quota calendar offset of +5:30, then the day resets at 18:30 UTC', () => {
    const config: PolicyConfig = { ...DEFAULT_POLICY_CONFIG, quotaWindowOffsetMinutes: 330 };
    const sends = distinctSends(100, DAY_START + HOUR, 7_000);
    const beforeMidnightIST = aSend({ occurredAt: DAY_START + 18 * HOUR + 29 * 60_000 });
    const afterMidnightIST = aSend({ occurredAt: DAY_START + 18 * HOUR + 30 * 60_000, recipient: '+14155550998' });
    given(activeCustomer(), { config })
      .when([...sends, beforeMidnightIST])
      .then([...times(100, accepted()), rejected('daily_message_limit_exceeded', { quotaWindows: { day: '2026-11-22' } })])
      .withDetails({ window: '2026-11-22', resets_at: '2026-11-22T18:30:00.000Z' });
    given(activeCustomer(), { config })
      .when([...sends, beforeMidnightIST, afterMidnightIST])
      .then([...times(100, accepted()), rejected('daily_message_limit_exceeded'), accepted({ quotaWindows: { day: '2026-11-23' } })]);
  });

  it('counts a late command (older window than the state) against the newest window', () => {
    const today = distinctSends(100, DAY_START + 24 * HOUR + HOUR, 7_000);
    given(activeCustomer())
      .when([...today, aSend({ occurredAt: DAY_START + 24 * HOUR - 1, recipient: '+14155550997' })])
      .then([...times(100, accepted({ quotaWindows: { day: '2026-11-23' } })), rejected('daily_message_limit_exceeded')])
      .withDetails({ window: '2026-11-23' });
  });
});
