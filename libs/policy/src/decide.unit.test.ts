import { describe, expect, it } from 'vitest';
import { POLICY_VERSION } from './index.ts';
import { messageDigest } from './digest.ts';
import { RULES } from './rules/index.ts';
import { activeCustomer, aSend, CUSTOMER, INSTANCE, paused, RECIPIENT, suppressed, T0 } from './testing/fixtures.ts';
import { accepted, given, rejected } from './testing/given-when-then.ts';

describe('decide', () => {
  it('given an active customer, when a transactional send arrives, then exactly one SendDecided (accepted) is emitted', () => {
    const command = aSend({ commandId: 'cmd_ok' });
    given(activeCustomer()).when(command).then([
      {
        type: 'SendDecided',
        customerId: CUSTOMER,
        at: T0,
        commandId: 'cmd_ok',
        instanceId: INSTANCE,
        recipient: RECIPIENT,
        purpose: 'transactional',
        digest: messageDigest(command.text),
        decision: 'accepted',
        errorCode: null,
        reason: null,
        quotaWindows: { day: '2026-11-22', month: '2026-11' },
        tokensLeft: 9,
        policyVersion: POLICY_VERSION,
      },
    ]);
  });

  it('records every rule, in the documented order, as pass when accepted', () => {
    const { decisions } = given(activeCustomer()).when(aSend()).then([accepted()]).outcome;
    expect(decisions[0]!.rules.map((r) => [r.rule, r.outcome])).toEqual(RULES.map((r) => [r.name, 'pass']));
  });

  it('order: a suppressed recipient on a paused instance gets recipient_suppressed, and the later rules are skipped', () => {
    const { decisions } = given([...activeCustomer(), paused(), suppressed()]).when(aSend()).then([rejected('recipient_suppressed')]).outcome;
    const decision = decisions[0]!;
    expect(decision.rules.map((r) => `${r.rule}:${r.outcome}`)).toEqual([
      'module_enabled:pass',
      'active_plan:pass',
      'purpose_allowed:pass',
      'recipient_not_suppressed:fail',
      'instance_not_paused:skipped',
      'instance_not_restricted:skipped',
      'daily_limit:skipped',
      'monthly_limit:skipped',
      'velocity:skipped',
      'first_contact_limit:skipped',
      'content_policy:skipped',
      'url_shortener:skipped',
      'bulk_campaign:skipped',
    ]);
    expect(decision.rules.filter((r) => r.outcome === 'skipped').every((r) => r.details === null)).toBe(true);
  });

  it('order: the module check comes before the plan check, the plan before the purpose', () => {
    given([]).when(aSend({ source: 'pbx', purpose: 'marketing' })).then([rejected('module_not_enabled')]);
    given([]).when(aSend({ purpose: 'marketing' })).then([rejected('active_plan_required')]);
  });

  it('order: content is judged before the shortener and the bulk check', () => {
    given(activeCustomer()).when(aSend({ text: '50% off! https://bit.ly/x' })).then([rejected('policy_violation', { reason: 'promotional_content' })]).withDetails({ rule: 'content_policy' });
  });

  it('records the policy_violation reason on SendDecided (for the quality signals)', () => {
    given(activeCustomer()).when(aSend({ text: 'https://bit.ly/x' })).then([rejected('policy_violation', { reason: 'url_shortener' })]);
  });

  it('given the state of another customer, then it throws (a caller bug, not a policy outcome)', () => {
    given(activeCustomer()).when(aSend({ customerId: 'cus_other' })).thenThrows(/cus_other/);
  });

  it('is deterministic: the same command on the same state gives deep-equal results, whatever the wall clock', () => {
    const spec = given(activeCustomer());
    const command = aSend({ occurredAt: T0 + 123 });
    const first = spec.when(command).then([accepted()]).outcome;
    expect(spec.when(command).then([accepted()]).outcome).toEqual(first);
  });
});
