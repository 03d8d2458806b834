import { describe, it } from 'vitest';
import { activeCustomer, aSend, DAY, planChanged, registered, T0 } from '../testing/fixtures.ts';
import { accepted, given, rejected } from '../testing/given-when-then.ts';

describe('active_plan', () => {
  it('given a paid plan, when sending before validUntil, then it passes', () => {
    given(activeCustomer()).when(aSend()).then([accepted()]);
  });

  it('given no plan, then 403 active_plan_required', () => {
    given([registered()]).when(aSend()).then([rejected('active_plan_required')]).withDetails({ rule: 'active_plan', reason: 'no_plan' });
  });

  it('given the plan ends exactly at the command time, then it is expired (validUntil is exclusive)', () => {
    given([registered(), planChanged('starter', T0)]).when(aSend({ occurredAt: T0 })).then([rejected('active_plan_required')]).withDetails({ reason: 'plan_expired' });
  });

  it('given a plan one millisecond longer, then it passes', () => {
    given([registered(), planChanged('starter', T0 + 1)]).when(aSend({ occurredAt: T0 })).then([accepted()]);
  });

  it('given a plan id the config does not know, then 403 active_plan_required', () => {
    given([registered(), planChanged('platinum')]).when(aSend()).then([rejected('active_plan_required')]).withDetails({ reason: 'unknown_plan', plan: 'platinum' });
  });

  it('given the plan was withdrawn, then 403 active_plan_required', () => {
    given([...activeCustomer(), planChanged(null, null, T0 - 1)]).when(aSend()).then([rejected('active_plan_required')]).withDetails({ reason: 'no_plan' });
  });

  it('given a plan that expired yesterday was renewed, then it passes', () => {
    given([registered(), planChanged('starter', T0 - DAY), planChanged('growth', T0 + 30 * DAY, T0 - 1)]).when(aSend()).then([accepted()]);
  });
});
