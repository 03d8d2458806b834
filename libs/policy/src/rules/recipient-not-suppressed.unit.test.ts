import { describe, it } from 'vitest';
import { activeCustomer, aSend, RECIPIENT, suppressed, unsuppressed } from '../testing/fixtures.ts';
import { given } from '../testing/given-when-then.ts';

describe('recipient_not_suppressed', () => {
  it('given the recipient opted out, then 403 recipient_suppressed with source opt_out', () => {
    given([...activeCustomer(), suppressed(RECIPIENT, 'opt_out')]).when(aSend()).thenRejected('recipient_suppressed', { rule: 'recipient_not_suppressed', source: 'opt_out' });
  });

  it('given a manual suppression entered unnormalised, then the E.164 recipient is still refused', () => {
    given([...activeCustomer(), suppressed('+1 (415) 555-2671', 'manual')]).when(aSend({ recipient: '+14155552671' })).thenRejected('recipient_suppressed', { source: 'manual' });
  });

  it('given another recipient is suppressed, then this one passes', () => {
    given([...activeCustomer(), suppressed('+14155550000')]).when(aSend()).thenAccepted();
  });

  it('given both sources, when one is lifted, then the other still refuses; when both are lifted, it passes', () => {
    const both = [...activeCustomer(), suppressed(RECIPIENT, 'opt_out'), suppressed(RECIPIENT, 'manual')];
    given(both).when(aSend()).thenRejected('recipient_suppressed', { source: 'opt_out', sources: ['opt_out', 'manual'] });
    given([...both, unsuppressed(RECIPIENT, 'opt_out')]).when(aSend()).thenRejected('recipient_suppressed', { source: 'manual' });
    given([...both, unsuppressed(RECIPIENT, 'opt_out'), unsuppressed('+1 415 555 2671', 'manual')]).when(aSend()).thenAccepted();
  });
});
