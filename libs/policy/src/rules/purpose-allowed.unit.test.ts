import { MESSAGE_PURPOSES } from '@gw/contract';
import { describe, it } from 'vitest';
import type { PolicyEvent } from '../events.ts';
import { activeCustomer, aSend, CUSTOMER, INSTANCE, T0 } from '../testing/fixtures.ts';
import { accepted, given, rejected } from '../testing/given-when-then.ts';

const purposes = (instanceId: string | null, list: string[]): PolicyEvent => ({ type: 'AllowedPurposesChanged', customerId: CUSTOMER, at: T0 - 1000, instanceId, purposes: list });

describe('purpose_allowed', () => {
  it.each(MESSAGE_PURPOSES)('given defaults, when the purpose is %s, then it passes', (purpose) => {
    given(activeCustomer()).when(aSend({ purpose })).then([accepted()]);
  });

  it('when the purpose is marketing, then 422 message_purpose_not_allowed naming the field', () => {
    given(activeCustomer()).when(aSend({ purpose: 'marketing' })).then([rejected('message_purpose_not_allowed')]).withDetails({
      rule: 'purpose_allowed', field: 'message_purpose', value: 'marketing', reason: 'unknown_purpose',
    });
  });

  it('given the customer allows only authentication, when sending support, then 422', () => {
    given([...activeCustomer(), purposes(null, ['authentication'])]).when(aSend({ purpose: 'support' })).then([rejected('message_purpose_not_allowed')]).withDetails({
      reason: 'not_allowed_for_account', allowed: ['authentication'],
    });
  });

  it('given an instance list, then it narrows the customer list (intersection) for that instance only', () => {
    const history = [...activeCustomer(), purposes(null, ['support', 'transactional']), purposes(INSTANCE, ['support', 'authentication'])];
    given(history).when(aSend({ purpose: 'support' })).then([accepted()]);
    given(history).when(aSend({ purpose: 'authentication' })).then([rejected('message_purpose_not_allowed')]).withDetails({ allowed: ['support'] });
    given(history).when(aSend({ purpose: 'transactional' })).then([rejected('message_purpose_not_allowed')]);
    given(history).when(aSend({ purpose: 'transactional', instanceId: 'ins_other' })).then([accepted()]);
  });
});
