import { describe, expect, it } from 'vitest';
import { DEFAULT_POLICY_CONFIG, effectivePlan, initialPolicyState, instancesFrom, type CustomerPolicyState, type QualitySignal } from '@gw/policy';
import { formValues, parseLimitRequest, readLimit } from './limit-request-form.ts';
import { calendarName } from '../format.ts';
import { dayLabels, lastDays, lastWeeks, optOutsChart, pauseViews, planFacts, quotaView, sendsChart, velocityView } from './view.ts';

const NOW = Date.UTC(2026, 10, 22, 15, 30); // Sun 22 Nov 2026 15:30 UTC
const HOUR = 3_600_000;

const stateWith = (patch: Partial<CustomerPolicyState>): CustomerPolicyState => ({ ...initialPolicyState('cus_1'), ...patch });
const growth = stateWith({ plan: { planId: 'growth', validUntil: NOW + 10 * 24 * HOUR } });

describe('periods', () => {
  it('gives the last 30 days of the quota calendar, today last, and where the first starts', () => {
    const days = lastDays(NOW, 0, 30);
    expect(days.keys).toHaveLength(30);
    expect(days.keys[0]).toBe('2026-10-24');
    expect(days.keys[29]).toBe('2026-11-22');
    expect(days.from.toISOString()).toBe('2026-10-24T00:00:00.000Z');
  });

  it('follows a quota calendar offset from UTC (the policy’s own windows)', () => {
    // 22:30 UTC is already the 23rd at UTC+05:30; its day started at 18:30 UTC.
    const days = lastDays(Date.UTC(2026, 10, 22, 22, 30), 330, 2);
    expect(days.keys).toEqual(['2026-11-22', '2026-11-23']);
    expect(days.from.toISOString()).toBe('2026-11-21T18:30:00.000Z');
    expect(calendarName(330)).toBe('UTC+05:30');
    expect(calendarName(-300)).toBe('UTC-05:00');
    expect(calendarName(0)).toBe('UTC');
  });

  it('gives the last 12 weeks from Monday, this week last', () => {
    const weeks = lastWeeks(NOW, 12);
    expect(weeks.keys).toHaveLength(12);
    expect(weeks.keys[11]).toBe('2026-11-16'); // the Monday before Sunday the 22nd
    expect(weeks.keys[0]).toBe('2026-08-31');
    expect(weeks.from.toISOString()).toBe('2026-08-31T00:00:00.000Z');
    expect(lastWeeks(Date.UTC(2026, 10, 16, 0, 0), 1).keys).toEqual(['2026-11-16']);
  });

  it('labels a day short and long', () => {
    expect(dayLabels('2026-11-03')).toEqual({ label: '3 Nov', longLabel: 'Tue 3 Nov 2026' });
  });
});

describe('the sends chart', () => {
  const days = lastDays(NOW, 0, 30);

  it('stacks accepted first, then each refusal code that occurred, in the policy’s order', () => {
    const chart = sendsChart(
      [
        { day: '2026-11-22', decision: 'accepted', error_code: null, n: 40 },
        { day: '2026-11-22', decision: 'rejected', error_code: 'sending_throttled', n: 3 },
        { day: '2026-11-21', decision: 'rejected', error_code: 'daily_message_limit_exceeded', n: 5 },
        { day: '2026-11-21', decision: 'rejected', error_code: 'something_new', n: 1 },
        // Outside the period: ignored.
        { day: '2026-09-01', decision: 'accepted', error_code: null, n: 99 },
      ],
      days,
      'UTC',
    );
    expect(chart.table.headers).toEqual(['Day (UTC)', 'Accepted', 'Refused: daily limit', 'Refused: sending too fast', 'Refused: something new', 'Total']);
    expect(chart.codes).toEqual([
      { label: 'Refused: daily limit', code: 'daily_message_limit_exceeded' },
      { label: 'Refused: sending too fast', code: 'sending_throttled' },
      { label: 'Refused: something new', code: 'something_new' },
    ]);
    expect(chart.table.rows.find((r) => r.key === '2026-11-22')).toEqual({ key: '2026-11-22', label: 'Sun 22 Nov 2026', cells: [40, 0, 3, 0], total: 43 });
    expect(chart.table.totals).toEqual([40, 5, 3, 1, 49]);
    expect(chart.html).toContain('data-series="sending_throttled" data-category="2026-11-22" data-value="3"');
  });

  it('says there are no sends yet when there are none', () => {
    const chart = sendsChart([], days, 'UTC');
    expect(chart.empty).toBe(true);
    expect(chart.html).toContain('No sends yet in the last 30 days.');
  });

  it('counts opt-outs per week, and says when there were none', () => {
    const weeks = lastWeeks(NOW, 12);
    const chart = optOutsChart([{ week: '2026-11-16', n: 4 }, { week: '2026-11-09', n: 1 }], weeks);
    expect(chart.table.totals).toEqual([5, 5]);
    expect(chart.html).toContain('data-series="opt_out" data-category="2026-11-16" data-value="4"');
    expect(chart.table.rows.at(-1)!.label).toBe('Week of Mon 16 Nov 2026');
    expect(optOutsChart([], weeks).html).toContain('No opt-outs in the last 12 weeks.');
  });
});

describe('quotas', () => {
  it('says used against the limit, what is left, and how close it is', () => {
    const q = quotaView(412, 1000, 'day', '2026-11-22', Date.UTC(2026, 10, 23));
    expect(q).toMatchObject({ text: '412 of 1,000 today', left: 588, percent: 41.2, tone: 'good', resetsAt: '2026-11-23 00:00 UTC' });
    expect(quotaView(850, 1000, 'month', '2026-11', 0)).toMatchObject({ text: '850 of 1,000 this month', tone: 'warn' });
    expect(quotaView(1200, 1000, 'day', 'd', 0)).toMatchObject({ left: 0, percent: 100, tone: 'bad' });
  });

  it('reads the effective limits: an override granted after review wins over the plan', () => {
    const overridden = stateWith({ ...growth, override: { at: NOW, daily: 900, grantedBy: 'ops-anna', reason: 'reviewed' } });
    const plan = effectivePlan(overridden, DEFAULT_POLICY_CONFIG)!;
    expect([plan.dailyLimit, plan.monthlyLimit]).toEqual([900, 5000]);
    expect(planFacts(overridden, plan, NOW, 0)).toMatchObject({ name: 'Growth', overriddenBy: 'ops-anna', ended: false, calendar: 'UTC' });
  });

  it('says when the plan has ended, and when there is none', () => {
    const ended = stateWith({ plan: { planId: 'growth', validUntil: NOW - 1 } });
    expect(planFacts(ended, effectivePlan(ended, DEFAULT_POLICY_CONFIG), NOW, 0).ended).toBe(true);
    const none = initialPolicyState('cus_1');
    expect(planFacts(none, effectivePlan(none, DEFAULT_POLICY_CONFIG), NOW, 0)).toMatchObject({ name: null, ended: false });
  });
});

describe('velocity', () => {
  it('says the limits in words and refills each instance’s bucket to now, as the engine does', () => {
    // Growth: burst 30, 30 a minute. 4 tokens left a minute ago → 34, capped at 30; 2 left 4 s ago → 2 + 2 = 4.
    const state = stateWith({ ...growth, instances: instancesFrom({ buckets: { ins_a: { tokens: 2, at: NOW - 4_000 }, ins_b: { tokens: 4, at: NOW - 60_000 } } }) });
    const view = velocityView(effectivePlan(state, DEFAULT_POLICY_CONFIG)!, state, [{ id: 'ins_a', name: 'front-desk' }, { id: 'ins_b', name: 'lab' }, { id: 'ins_c', name: 'new' }], NOW);
    expect(view.burst).toBe('Up to 30 messages at once from each instance');
    expect(view.refill).toBe('30 more messages a minute from each instance after that');
    expect(view.recipientInterval).toBe('At least 6 seconds between two messages from one instance to the same recipient');
    expect(view.instances.map((i) => [i.name, i.tokens, i.full])).toEqual([['front-desk', 4, false], ['lab', 30, true], ['new', 30, true]]);
    expect(view.instances[0]!.text).toBe('4 of 30 available now, 30 more a minute');
  });
});

describe('review pauses', () => {
  const signals: QualitySignal[] = [
    { signal: 'violation_rate', rate: 0.05, count: 2, volume: 40, threshold: 0.2, minVolume: 20, crossed: false },
    { signal: 'opt_out_rate', rate: 0.0625, count: 5, volume: 80, threshold: 0.05, minVolume: 40, crossed: true },
  ];

  it('says who paused an instance, when, why and what the quality check measured', () => {
    const state = stateWith({
      paused: {
        ins_a: { reason: 'quality thresholds crossed: opt_out_rate', by: 'auto', at: Date.UTC(2026, 10, 20, 9, 15), signals },
        ins_b: { reason: 'complaint from the network', by: 'ops-anna', at: Date.UTC(2026, 10, 21, 8, 0) },
      },
    });
    const [auto, manual, sending] = pauseViews(state, [{ id: 'ins_a', name: 'a' }, { id: 'ins_b', name: 'b' }, { id: 'ins_c', name: 'c' }]);
    expect(auto).toMatchObject({ paused: true, since: '2026-11-20 09:15 UTC', by: "the gateway's automatic quality check", why: 'Too many problems in the last hours: recipients who opted out.' });
    expect(auto!.signals[1]).toEqual({ signal: 'opt_out_rate', what: 'Recipients who opted out', text: '5 of 80 messages sent (6.25 %); the review starts at 5 % once there are at least 40', crossed: true });
    expect(manual).toMatchObject({ paused: true, by: 'our review team (ops-anna)', why: 'complaint from the network', signals: [] });
    expect(sending).toMatchObject({ paused: false, since: null });
  });
});

describe('the limit request form', () => {
  const current = { daily: 500, monthly: 5000 };

  it('reads whole numbers as people write them', () => {
    expect([readLimit(''), readLimit('2000'), readLimit('2,000'), readLimit('2 000'), readLimit('2.5'), readLimit('-3'), readLimit('abc')]).toEqual([null, 2000, 2000, 2000, NaN, NaN, NaN]);
  });

  it('takes a daily limit, a monthly limit or both above the current ones, with a reason', () => {
    expect(parseLimitRequest({ daily: '800', reason: ' reminders ' }, current)).toEqual({ ok: true, daily: 800, monthly: null, reason: 'reminders' });
    expect(parseLimitRequest({ monthly: '9,000', reason: 'r' }, current)).toEqual({ ok: true, daily: null, monthly: 9000, reason: 'r' });
    expect(parseLimitRequest({ daily: '6000', monthly: '60000', reason: 'r' }, current)).toMatchObject({ ok: true, daily: 6000, monthly: 60000 });
  });

  it('says what is wrong, naming the field', () => {
    expect(parseLimitRequest({ reason: 'r' }, current)).toMatchObject({ ok: false, field: 'daily', message: expect.stringContaining('daily limit you need, the monthly limit') });
    expect(parseLimitRequest({ daily: 'lots', reason: 'r' }, current)).toMatchObject({ ok: false, field: 'daily', message: 'Write the daily limit as a whole number, e.g. 1,000.' });
    expect(parseLimitRequest({ daily: '500', reason: 'r' }, current)).toMatchObject({ ok: false, field: 'daily', message: expect.stringContaining('already 500') });
    expect(parseLimitRequest({ monthly: '0', reason: 'r' }, current)).toMatchObject({ ok: false, field: 'monthly' });
    expect(parseLimitRequest({ daily: '6000', reason: 'r' }, current)).toMatchObject({ ok: false, field: 'monthly', message: expect.stringContaining('more than the monthly limit of 5,000') });
    expect(parseLimitRequest({ daily: '800', reason: '  ' }, current)).toMatchObject({ ok: false, field: 'reason', message: expect.stringContaining('what you send') });
    expect(parseLimitRequest({ daily: '800', reason: 'a\u0000b' }, current)).toMatchObject({ ok: false, field: 'reason', message: 'The reason contains a NUL character.' });
    expect(parseLimitRequest({ daily: '800', reason: 'x'.repeat(2001) }, current)).toMatchObject({ ok: false, field: 'reason' });
    expect(parseLimitRequest(undefined, current)).toMatchObject({ ok: false });
  });

  it('keeps what was typed for the form, bounded', () => {
    expect(formValues({ daily: ' 800 ', monthly: 7, reason: 'x'.repeat(3000) })).toEqual({ daily: '800', monthly: '', reason: 'x'.repeat(2000) });
  });
});
