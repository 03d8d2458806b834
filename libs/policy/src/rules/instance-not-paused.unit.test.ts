import { describe, it } from 'vitest';
import { activeCustomer, aSend, paused, resumed } from '../testing/fixtures.ts';
import { accepted, given, rejected } from '../testing/given-when-then.ts';

describe('instance_not_paused', () => {
  it('given the instance is paused for review, then 423 instance_paused_for_review', () => {
    given([...activeCustomer(), paused()]).when(aSend()).then([rejected('instance_paused_for_review')]).withDetails({ rule: 'instance_not_paused', instance_id: 'ins_1', paused_by: 'alice' });
  });

  it('given another instance is paused, then this one sends', () => {
    given([...activeCustomer(), paused('ins_2')]).when(aSend()).then([accepted()]);
  });

  it('given the instance was resumed, then it sends again', () => {
    given([...activeCustomer(), paused(), resumed()]).when(aSend()).then([accepted()]);
  });
});
