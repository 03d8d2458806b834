import { describe, it } from 'vitest';
import { activeCustomer, aSend, distinctSends, T0 } from '../testing/fixtures.ts';
import { accepted, given, rejected, times } from '../testing/given-when-then.ts';

// Starter: burst 10, refill 10 a minute (one token every 6 s), 6 s between sends to one recipient.
describe('velocity', () => {
  it('given an idle instance, when 11 sends arrive at once, then the burst of 10 passes and the 11th is throttled', () => {
    // The bucket level after each accepted send is on its SendDecided: 9, 8, ..., 0.
    given(activeCustomer())
      .when(distinctSends(11, T0, 0))
      .then([...Array.from({ length: 10 }, (_, i) => accepted({ tokensLeft: 9 - i })), rejected('sending_throttled')])
      .withDetails({ rule: 'velocity', control: 'instance_token_bucket', retry_after_ms: 6_000, burst: 10, refill_per_minute: 10 });
  });

  it('refills with time: one token after 6 s, not before', () => {
    const burst = distinctSends(10, T0, 0);
    const spec = given(activeCustomer());
    spec.when([...burst, aSend({ recipient: '+14155550900', occurredAt: T0 + 5_999 })]).then([...times(10, accepted()), rejected('sending_throttled')]).withDetails({ retry_after_ms: 1 });
    spec.when([...burst, aSend({ recipient: '+14155550900', occurredAt: T0 + 6_000 })]).then([...times(10, accepted()), accepted({ tokensLeft: 0 })]);
    spec.when([...burst, aSend({ recipient: '+14155550900', occurredAt: T0 + 6_000 }), aSend({ recipient: '+14155550901', occurredAt: T0 + 6_000 })])
      .then([...times(11, accepted()), rejected('sending_throttled')])
      .withDetails({ control: 'instance_token_bucket' });
  });

  it('keeps a bucket per instance', () => {
    given(activeCustomer()).when([...distinctSends(10, T0, 0), aSend({ instanceId: 'ins_2', occurredAt: T0 })]).then([...times(10, accepted()), accepted({ instanceId: 'ins_2', tokensLeft: 9 })]);
  });

  it('refused sends do not take tokens', () => {
    given(activeCustomer())
      .when([...distinctSends(20, T0, 0, { purpose: 'marketing' }), ...distinctSends(10, T0, 0)])
      .then([...times(20, rejected('message_purpose_not_allowed')), ...times(10, accepted())]);
  });

  it('spaces sends to one recipient by the minimum interval (6 s)', () => {
    const first = aSend({ occurredAt: T0, text: 'Your code is 111111' });
    const spec = given(activeCustomer());
    spec.when([first, aSend({ occurredAt: T0 + 5_000, text: 'Your code is 222222' })]).then([accepted(), rejected('sending_throttled')]).withDetails({ control: 'recipient_interval', retry_after_ms: 1_000 });
    spec.when([first, aSend({ occurredAt: T0 + 6_000, text: 'Your code is 222222' })]).then(times(2, accepted()));
    spec.when([first, aSend({ occurredAt: T0 + 1_000, instanceId: 'ins_2' })]).then(times(2, accepted()));
  });
});
