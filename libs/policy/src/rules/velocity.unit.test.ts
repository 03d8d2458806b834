import { describe, expect, it } from 'vitest';
import { activeCustomer, aSend, distinctSends, T0 } from '../testing/fixtures.ts';
import { given } from '../testing/given-when-then.ts';

// Starter: burst 10, refill 10 a minute (one token every 6 s), 3 s between sends to one recipient.
describe('velocity', () => {
  it('given an idle instance, when 11 sends arrive at once, then the burst of 10 passes and the 11th is throttled', () => {
    given(activeCustomer()).when(distinctSends(11, T0, 0)).thenOutcome(({ decisions }) => {
      expect(decisions.filter((d) => d.decision === 'accepted')).toHaveLength(10);
      expect(decisions[10]).toMatchObject({
        code: 'sending_throttled',
        details: { rule: 'velocity', control: 'instance_token_bucket', retry_after_ms: 6_000, burst: 10, refill_per_minute: 10 },
      });
    });
  });

  it('refills with time: one token after 6 s, not before', () => {
    const burst = distinctSends(10, T0, 0);
    const spec = given(activeCustomer());
    spec.when([...burst, aSend({ recipient: '+14155550900', occurredAt: T0 + 5_999 })]).thenRejected('sending_throttled', { retry_after_ms: 1 });
    spec.when([...burst, aSend({ recipient: '+14155550900', occurredAt: T0 + 6_000 })]).thenAccepted();
    spec.when([...burst, aSend({ recipient: '+14155550900', occurredAt: T0 + 6_000 }), aSend({ recipient: '+14155550901', occurredAt: T0 + 6_000 })])
      .thenRejected('sending_throttled', { control: 'instance_token_bucket' });
  });

  it('keeps a bucket per instance', () => {
    given(activeCustomer()).when([...distinctSends(10, T0, 0), aSend({ instanceId: 'ins_2', occurredAt: T0 })]).thenAccepted();
  });

  it('refused sends do not take tokens', () => {
    given(activeCustomer()).when([...distinctSends(20, T0, 0, { purpose: 'marketing' }), ...distinctSends(10, T0, 0)]).thenOutcome(({ decisions }) => {
      expect(decisions.slice(20).every((d) => d.decision === 'accepted')).toBe(true);
    });
  });

  it('spaces sends to one recipient by the minimum interval (3 s)', () => {
    const first = aSend({ occurredAt: T0, text: 'Your code is 111111' });
    const spec = given(activeCustomer());
    spec.when([first, aSend({ occurredAt: T0 + 2_000, text: 'Your code is 222222' })]).thenRejected('sending_throttled', { control: 'recipient_interval', retry_after_ms: 1_000 });
    spec.when([first, aSend({ occurredAt: T0 + 3_000, text: 'Your code is 222222' })]).thenAccepted();
    spec.when([first, aSend({ occurredAt: T0 + 1_000, instanceId: 'ins_2' })]).thenAccepted();
  });
});
