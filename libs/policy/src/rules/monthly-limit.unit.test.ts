import { describe, it } from 'vitest';
import type { PolicyEvent } from '../events.ts';
import { activeCustomer, CUSTOMER, DAY, distinctSends, HOUR, planChanged, registered, T0 } from '../testing/fixtures.ts';
import { accepted, given, rejected, times } from '../testing/given-when-then.ts';

const NOV_30 = Date.UTC(2026, 10, 30);
const monthly = (limit: number): PolicyEvent => ({ type: 'LimitsOverridden', customerId: CUSTOMER, at: T0 - DAY, monthly: limit, grantedBy: 'reviewer.bob', reason: 'test' });

describe('monthly_limit', () => {
  it('given a monthly limit of 5, when 8 sends are decided, then 5 succeed and the rest get 429 monthly_message_limit_exceeded', () => {
    given([...activeCustomer(), monthly(5)])
      .when(distinctSends(8, T0, 10_000))
      .then([...times(5, accepted({ quotaWindows: { month: '2026-11' } })), ...times(3, rejected('monthly_message_limit_exceeded'))])
      .withDetails({ rule: 'monthly_limit', limit: 5, used: 5, window: '2026-11', resets_at: '2026-12-01T00:00:00.000Z' });
  });

  it('accumulates across days of the month and resets at the UTC month boundary', () => {
    const history = [registered(), planChanged('starter', NOV_30 + 30 * DAY), monthly(6)];
    const sends = [...distinctSends(3, NOV_30 - 5 * DAY, 10_000), ...distinctSends(3, NOV_30 - 2 * DAY, 10_000)];
    const spec = given(history);
    spec.when([...sends, ...distinctSends(1, NOV_30 + 23 * HOUR, 10_000)]).then([...times(6, accepted()), rejected('monthly_message_limit_exceeded')]);
    spec.when([...sends, ...distinctSends(1, NOV_30 + DAY, 10_000)]).then([...times(6, accepted()), accepted({ quotaWindows: { month: '2026-12' } })]);
  });
});
