import { describe, it } from 'vitest';
import { activeCustomer, aSend, HOUR, MINUTE, T0 } from '../testing/fixtures.ts';
import { accepted, given, rejected, times } from '../testing/given-when-then.ts';

// Starter: the same body to at most 20 distinct recipients within an hour.
const TEXT = 'Our office is closed on Monday for maintenance.';
const toDistinct = (n: number, from: number, gapMs: number, offset = 0) =>
  Array.from({ length: n }, (_, i) => aSend({ text: TEXT, recipient: `+1415556${String(offset + i).padStart(4, '0')}`, occurredAt: from + i * gapMs }));

describe('bulk_campaign', () => {
  it('given 20 distinct recipients got the body within the hour, when the 21st is sent, then 403 policy_violation bulk_campaign', () => {
    given(activeCustomer()).when([...toDistinct(20, T0, 7_000), ...toDistinct(1, T0 + 20 * 7_000, 0, 20)]).then([...times(20, accepted()), rejected('policy_violation', { reason: 'bulk_campaign' })]).withDetails({
      rule: 'bulk_campaign', reason: 'bulk_campaign', distinct_recipients: 21, threshold: 20, window_ms: HOUR,
    });
  });

  it('counts distinct recipients: resending to a recipient already counted is not a new one', () => {
    const resend = aSend({ text: TEXT, recipient: '+14155560000', occurredAt: T0 + 30 * MINUTE });
    given(activeCustomer()).when([...toDistinct(20, T0, 7_000), resend]).then(times(21, accepted()));
  });

  it('normalises the body: case and whitespace changes are the same message', () => {
    const variant = aSend({ text: `  ${TEXT.toUpperCase()}   `, recipient: '+14155569999', occurredAt: T0 + 10 * MINUTE });
    given(activeCustomer()).when([...toDistinct(20, T0, 7_000), variant]).then([...times(20, accepted()), rejected('policy_violation', { reason: 'bulk_campaign' })]);
  });

  it('forgets after the window', () => {
    // the 21st comes an hour after the last of the 20 (and only the first few have left the window)
    given(activeCustomer()).when([...toDistinct(20, T0, 7_000), ...toDistinct(1, T0 + 19 * 7_000 + HOUR, 0, 20)]).then(times(21, accepted()));
    given(activeCustomer()).when([...toDistinct(20, T0, 7_000), ...toDistinct(1, T0 + 30 * MINUTE, 0, 20)]).then([...times(20, accepted()), rejected('policy_violation', { reason: 'bulk_campaign' })]);
  });

  it('personalised bodies (codes, order numbers) are different messages', () => {
    const codes = Array.from({ length: 40 }, (_, i) => aSend({ text: `Your verification code is ${100_000 + i}`, recipient: `+1415557${String(i).padStart(4, '0')}`, occurredAt: T0 + i * 7_000 }));
    given(activeCustomer()).when(codes).then(times(40, accepted()));
  });
});
