import { describe, expect, it } from 'vitest';
import { DEFAULT_POLICY_CONFIG, validatePolicyConfig } from './config/policy-config.ts';
import { describeRules } from './describe-rules.ts';
import { messageDigest } from './digest.ts';
import { POLICY_VERSION } from './index.ts';
import { createPolicy, PolicyConfigError } from './policy.ts';

describe('messageDigest', () => {
  it('ignores case, surrounding and repeated whitespace, zero-width characters and full-width forms', () => {
    const base = messageDigest('Your order has shipped.');
    expect(messageDigest('  YOUR   order\nhas shipped.  ')).toBe(base);
    expect(messageDigest('Your or\u200Bder has shipped.')).toBe(base);
    expect(messageDigest('Ｙｏｕｒ order has shipped.')).toBe(base);
    expect(base).toMatch(/^[0-9a-f]{64}$/);
  });

  it('keeps digits: personalised codes are different messages', () => {
    expect(messageDigest('Your code is 1234')).not.toBe(messageDigest('Your code is 9876'));
  });
});

describe('describeRules', () => {
  it('lists the thirteen rules in order with their codes and statuses', () => {
    expect(describeRules().map((r) => `${r.order}.${r.name}:${r.code}:${r.status}`)).toEqual([
      '1.module_enabled:module_not_enabled:403',
      '2.active_plan:active_plan_required:403',
      '3.purpose_allowed:message_purpose_not_allowed:422',
      '4.recipient_not_suppressed:recipient_suppressed:403',
      '5.instance_not_paused:instance_paused_for_review:423',
      '6.instance_not_restricted:sending_throttled:429',
      '7.daily_limit:daily_message_limit_exceeded:429',
      '8.monthly_limit:monthly_message_limit_exceeded:429',
      '9.velocity:sending_throttled:429',
      '10.first_contact_limit:sending_throttled:429',
      '11.content_policy:policy_violation:403',
      '12.url_shortener:policy_violation:403',
      '13.bulk_campaign:policy_violation:403',
    ]);
  });
});

describe('content rules', () => {
  it('are written in lower case, as they run on lower-cased text without a case-insensitive flag', () => {
    for (const category of DEFAULT_POLICY_CONFIG.content.categories) {
      for (const pattern of category.patterns) {
        // Upper-case escapes (\S, \D, \W, \B, \P{..}) are classes, not letters.
        expect(pattern.source.replace(/\\[A-Z]/g, ''), pattern.id).toBe(pattern.source.replace(/\\[A-Z]/g, '').toLowerCase());
      }
    }
  });
});

describe('config', () => {
  it('the default config is valid and POLICY_VERSION is derived from it', () => {
    expect(validatePolicyConfig(DEFAULT_POLICY_CONFIG)).toEqual([]);
    expect(POLICY_VERSION).toBe(`${DEFAULT_POLICY_CONFIG.version}+${DEFAULT_POLICY_CONFIG.content.version}`);
  });

  it('prices the three plans at 5, 12 and 30 USD per 30 days', () => {
    expect(Object.values(DEFAULT_POLICY_CONFIG.plans).map((p) => [p.id, p.priceUsd, p.periodDays])).toEqual([
      ['starter', 5, 30],
      ['growth', 12, 30],
      ['scale', 30, 30],
    ]);
  });

  it('rejects windows longer than the state remembers', () => {
    const config = { ...DEFAULT_POLICY_CONFIG, autoPause: { ...DEFAULT_POLICY_CONFIG.autoPause, windowHours: 48 } };
    expect(validatePolicyConfig(config)).toHaveLength(1);
  });

  it('createPolicy refuses an unusable configuration, naming every problem', () => {
    const config = { ...DEFAULT_POLICY_CONFIG, autoPause: { ...DEFAULT_POLICY_CONFIG.autoPause, windowHours: 48 }, plans: { ...DEFAULT_POLICY_CONFIG.plans, odd: { ...DEFAULT_POLICY_CONFIG.plans.starter!, id: 'odd', dailyLimit: 5_000 } } };
    expect(() => createPolicy(config)).toThrow(PolicyConfigError);
    expect(() => createPolicy(config)).toThrow(/autoPause\.windowHours must be within 1\.\.24; odd: dailyLimit exceeds monthlyLimit/);
    expect(createPolicy().version).toBe(POLICY_VERSION);
  });
});

