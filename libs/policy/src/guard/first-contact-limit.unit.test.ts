import { describe, expect, it } from 'vitest';
import { activeCustomer, aSend, DAY, HOUR, identityLinked, LID, MINUTE, RECIPIENT, T0 } from '../testing/fixtures.ts';
import { accepted, given, rejected, times } from '../testing/given-when-then.ts';
import { connected, contactLearned, newContacts } from './fixtures.ts';

// Warm-up (every plan): days 0–1 20/hour and 50/day, days 2–4 40 and 200, days 5–9 80 and 500,
// then the plan's caps (Starter 100/250, Growth 120/500, Scale 200/1,000), each capped by the plan's.
// Starter's bucket refills a token every 6 s and Growth's every 2 s: the gaps below stay above them.
const throttled = rejected('sending_throttled');

describe('first_contact_limit: warm-up by instance age', () => {
  it('given an instance first connected an hour ago (day 0), when 21 new contacts come within the hour, then 20 pass and the 21st waits for the hour', () => {
    given([...activeCustomer(), connected(T0 - HOUR)])
      .when(newContacts(21, T0, 7_000))
      .then([...times(20, accepted()), throttled])
      .withDetails({
        rule: 'first_contact_limit',
        control: 'warm_up_per_hour',
        controls: ['warm_up_per_hour'],
        retry_after_ms: HOUR - 20 * 7_000, // until the first of the hour leaves it
        schedule: 'warm_up',
        instance_age_days: 0,
        per_hour: 20,
        per_day: 50,
        first_contacts_last_hour: 20,
        first_contact: true,
      });
  });

  it('on day 0 the 51st new contact of the rolling day waits, however spread over the hours', () => {
    const at51 = T0 + 50 * 4 * MINUTE; // 15 an hour, under the hourly cap
    given([...activeCustomer(), connected(T0 - HOUR)])
      .when(newContacts(51, T0, 4 * MINUTE))
      .then([...times(50, accepted()), throttled])
      .withDetails({ control: 'warm_up_per_day', per_day: 50, first_contacts_last_day: 50, retry_after_ms: T0 + DAY - at51 });
  });

  it.each([
    { plan: 'starter', day: 2, allowed: 40, gap: 7_000, schedule: 'warm_up', control: 'warm_up_per_hour' },
    { plan: 'growth', day: 5, allowed: 80, gap: 2_000, schedule: 'warm_up', control: 'warm_up_per_hour' },
    { plan: 'growth', day: 10, allowed: 120, gap: 2_000, schedule: 'plan', control: 'first_contacts_per_hour' },
  ])('on day $day ($plan) the allowance grows to $allowed an hour', ({ plan, day, allowed, gap, schedule, control }) => {
    given([...activeCustomer(plan), connected(T0 - day * DAY)])
      .when(newContacts(allowed + 1, T0, gap))
      .then([...times(allowed, accepted()), throttled])
      .withDetails({ control, schedule, per_hour: allowed, instance_age_days: day });
  });

  it('when the next warm-up step starts sooner than the window frees up, retry_after_ms points at the step', () => {
    const stepAt = T0 + 10 * MINUTE; // day 2 begins: 40 an hour
    const spec = given([...activeCustomer(), connected(stepAt - 2 * DAY)]);
    spec.when(newContacts(21, T0, 7_000)).then([...times(20, accepted()), throttled]).withDetails({ instance_age_days: 1, retry_after_ms: stepAt - (T0 + 20 * 7_000) });
    spec.when([...newContacts(20, T0, 7_000), ...newContacts(1, stepAt, 0, 1)]).then(times(21, accepted()));
  });

  it('an instance that never reported its first connection is established: the plan caps apply at once (instances paired before the guard)', () => {
    given(activeCustomer('growth'))
      .when(newContacts(121, T0, 2_000))
      .then([...times(120, accepted()), throttled])
      .withDetails({ control: 'first_contacts_per_hour', schedule: 'plan', instance_age_days: null, per_hour: 120, per_day: 500 });
  });

  it("past the hourly cap, the plan's daily cap of first contacts holds over a rolling day", () => {
    // Scale: 200 an hour, 1,000 a day (its quota is 2,000). 190 an hour.
    const at1001 = T0 + 1_000 * 19_000;
    given(activeCustomer('scale'))
      .when(newContacts(1_001, T0, 19_000))
      .then([...times(1_000, accepted()), throttled])
      .withDetails({ control: 'first_contacts_per_day', first_contacts_last_day: 1_000, retry_after_ms: T0 + DAY - at1001 });
  });
});

describe('first_contact_limit: who is a first contact', () => {
  const dayZero = () => [...activeCustomer(), connected(T0 - HOUR)];
  const twenty = () => newContacts(20, T0, 7_000);
  const next = T0 + 20 * 7_000;

  it('a reply to someone who wrote to the instance (ContactLearned) is not a first contact, even with the allowance used up', () => {
    const { decisions } = given([...dayZero(), contactLearned(' +1 415 555 0999 ')])
      .when([...twenty(), aSend({ recipient: '+14155550999', occurredAt: next }), ...newContacts(1, next + 7_000, 0, 1)])
      .then([...times(21, accepted()), throttled]).outcome;
    expect(decisions[20]!.rules.find((r) => r.rule === 'first_contact_limit')?.details).toEqual({ first_contact: false });
  });

  it('someone the instance already sent to is no first contact any more', () => {
    given(dayZero())
      .when([...twenty(), aSend({ recipient: '+14157770000', occurredAt: next }), ...newContacts(1, next + 7_000, 0, 1)])
      .then([...times(21, accepted()), throttled]);
  });

  it('a linked id that wrote in counts as its number: the number is known once the link is learned', () => {
    const reply = aSend({ recipient: RECIPIENT, occurredAt: next });
    given([...dayZero(), contactLearned(LID), identityLinked(LID, RECIPIENT)]).when([...twenty(), reply]).then(times(21, accepted()));
    given([...dayZero(), contactLearned(LID)]).when([...twenty(), reply]).then([...times(20, accepted()), throttled]);
  });

  it('refused sends do not count, and each instance has its own allowance', () => {
    given(dayZero())
      .when([...newContacts(10, T0, 0, 2, { purpose: 'marketing' }), ...twenty(), ...newContacts(1, next, 0, 1, { instanceId: 'ins_2' }), ...newContacts(1, next + 7_000, 0, 3)])
      .then([...times(10, rejected('message_purpose_not_allowed')), ...times(20, accepted()), accepted({ instanceId: 'ins_2' }), throttled]);
  });

  it('a contact learned on another instance does not make it known here', () => {
    given([...dayZero(), contactLearned('+14155550999', T0 - MINUTE, 'ins_2')])
      .when([...twenty(), aSend({ recipient: '+14155550999', occurredAt: next })])
      .then([...times(20, accepted()), throttled]);
  });
});
