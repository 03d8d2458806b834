import { describe, it } from 'vitest';
import { DEFAULT_POLICY_CONFIG, type PolicyConfig } from '../config/policy-config.ts';
import { activeCustomer, aSend } from '../testing/fixtures.ts';
import { accepted, given, rejected } from '../testing/given-when-then.ts';

const TRANSACTIONAL = [
  'Your order 1234 has shipped.',
  'Your verification code is 123456',
  'Your appointment is tomorrow at 10:00',
  'Your wine order 5521 has shipped and arrives Friday.',
  'Your order qualifies for free shipping. Track it at https://shop.example.com/t/5521',
  'Ticket #889 was updated by our support team. Reply to this message to answer.',
  'Payment of $24.90 received. Thank you! Receipt: https://pay.example.com/r/abc',
  'Reminder: the election of the HOA board is on the agenda of Thursday\'s meeting.',
  'Server db-3 is down since 10:42 UTC, on-call has been paged.',
  'Enter code 482913 to sign in. It expires in 10 minutes.',
  'Your pharmacy order (nicotine patches) is ready for pickup.',
  'Hi Sam, your Essex branch appointment moved to 14:30.',
];

const PROHIBITED: [string, string][] = [
  ['Flash sale! 20% off everything this weekend only', 'promotional_content'],
  ['Use promo code SAVE10 at checkout', 'promotional_content'],
  ['Big deals and special offers in store now, hurry!', 'promotional_content'],
  ['Shop now: new collection just landed', 'promotional_content'],
  ['Vote for Jane Smith on Tuesday', 'political_content'],
  ['Re-elect Mayor Brown this November', 'political_content'],
  ['Hot singles near you, xxx videos', 'shaft_sex'],
  ['Happy hour tonight: $2 beers and cocktails', 'shaft_alcohol'],
  ['Gun show this Saturday, ammo at cost', 'shaft_firearms'],
  ['New vape flavours and cigarettes in stock', 'shaft_tobacco'],
  ['Join the race war, white power', 'shaft_hate'],
];

describe('content_policy', () => {
  it.each(TRANSACTIONAL)('passes transactional text: %s', (text) => {
    given(activeCustomer()).when(aSend({ text })).then([accepted()]);
  });

  it.each(PROHIBITED)('refuses %s as %s', (text, reason) => {
    given(activeCustomer()).when(aSend({ text })).then([rejected('policy_violation', { reason })]).withDetails({ rule: 'content_policy', reason, rules_version: DEFAULT_POLICY_CONFIG.content.version });
  });

  it('refuses promotional language whatever the declared (non-marketing) purpose', () => {
    for (const purpose of ['transactional', 'support', 'authentication']) {
      given(activeCustomer()).when(aSend({ purpose, text: 'Your order shipped! 30% off your next one with discount code BACK30' })).then([rejected('policy_violation', { reason: 'promotional_content', purpose })]);
    }
  });

  it('one weak word alone passes; two weak signals refuse', () => {
    given(activeCustomer()).when(aSend({ text: 'Your discount was applied to order 77.' })).then([accepted()]);
    given(activeCustomer()).when(aSend({ text: 'Hurry, the sale is on' })).then([rejected('policy_violation', { reason: 'promotional_content' })]).withDetails({ score: 2, matched: ['sale_words', 'limited_time'] });
  });

  it('sees through full-width letters and zero-width characters', () => {
    given(activeCustomer()).when(aSend({ text: 'Ｖｏｔｅ for\u200B Jane' })).then([rejected('policy_violation', { reason: 'political_content' })]);
  });

  it('takes thresholds per plan from config', () => {
    const strict: PolicyConfig = {
      ...DEFAULT_POLICY_CONFIG,
      plans: { ...DEFAULT_POLICY_CONFIG.plans, starter: { ...DEFAULT_POLICY_CONFIG.plans.starter!, contentThresholds: { shaft_alcohol: 1 } } },
    };
    const text = 'Your wine order 5521 has shipped.';
    given(activeCustomer()).when(aSend({ text })).then([accepted()]);
    given(activeCustomer(), { config: strict }).when(aSend({ text })).then([rejected('policy_violation', { reason: 'shaft_alcohol' })]).withDetails({ threshold: 1 });
  });

  it('reports the worst category when several match', () => {
    given(activeCustomer()).when(aSend({ text: 'Vote for Jane! 20% off beer, act now' })).then([rejected('policy_violation', { reason: 'promotional_content' })]).withDetails({ score: 4 });
  });
});
