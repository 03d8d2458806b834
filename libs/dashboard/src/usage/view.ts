// What /usage says, in words and numbers, from what the routes read: the plan and its effective
// limits (the policy library's own effectivePlan, so an override granted after review counts),
// the sends of the current quota day and month against them, the velocity limits and each
// instance's token bucket now, review pauses in plain words, and the two charts' data (days of
// the quota calendar, weeks from Monday, UTC). Pure: rows and state in, view out.
import { bucketAt, bucketOf, quotaWindows, type CustomerPolicyState, type EffectivePlan, type QualitySignal } from '@gw/policy';
import { stackedBarChart, type Chart, type ChartCategory, type ChartSeries } from '../charts/stacked-bars.ts';
import { calendarName, count, percent, utcMinute } from '../format.ts';
import { duration } from '../messaging-rules.ts';

const DAY = 86_400_000;
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const WEEKDAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];

/** "2026-11-03" → "3 Nov" and "Tue 3 Nov 2026" (the date of the key itself, whatever the calendar). */
export function dayLabels(key: string): { label: string; longLabel: string } {
  const [y, m, d] = key.split('-').map(Number) as [number, number, number];
  const date = new Date(Date.UTC(y, m - 1, d));
  return { label: `${d} ${MONTHS[m - 1]}`, longLabel: `${WEEKDAYS[date.getUTCDay()]} ${d} ${MONTHS[m - 1]} ${y}` };
}

export interface Period {
  /** Its days (or weeks), oldest first: keys as the queries group by. */
  keys: string[];
  /** The instant the first one starts. */
  from: Date;
}

/**
 * The last `n` days of the quota calendar (offset from UTC), today last. Keys are the policy's own
 * day windows (quotaWindows), which is also what the chart's SQL groups by.
 */
export function lastDays(now: number, offsetMinutes: number, n = 30): Period {
  const todayStart = quotaWindows(now, offsetMinutes).dayResetsAt - DAY;
  const keys = Array.from({ length: n }, (_, i) => quotaWindows(todayStart - (n - 1 - i) * DAY, offsetMinutes).day);
  return { keys, from: new Date(todayStart - (n - 1) * DAY) };
}

/** The last `n` weeks, Monday to Sunday in UTC, this week last; keys are their Mondays. */
export function lastWeeks(now: number, n = 12): Period {
  const today = new Date(now);
  const monday = Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate()) - ((today.getUTCDay() + 6) % 7) * DAY;
  const keys = Array.from({ length: n }, (_, i) => new Date(monday - (n - 1 - i) * 7 * DAY).toISOString().slice(0, 10));
  return { keys, from: new Date(monday - (n - 1) * 7 * DAY) };
}

/** What each refusal is called in the chart, and its colour; in the order the policy checks them. */
export const REFUSALS: ReadonlyArray<{ code: string; label: string; color: string }> = [
  { code: 'module_not_enabled', label: 'Refused: module off', color: '#94a3b8' },
  { code: 'active_plan_required', label: 'Refused: no active plan', color: '#475569' },
  { code: 'message_purpose_not_allowed', label: 'Refused: purpose not allowed', color: '#0b5394' },
  { code: 'recipient_suppressed', label: 'Refused: recipient opted out', color: '#7c3aed' },
  { code: 'instance_paused_for_review', label: 'Refused: instance paused', color: '#be185d' },
  { code: 'daily_message_limit_exceeded', label: 'Refused: daily limit', color: '#c2410c' },
  { code: 'monthly_message_limit_exceeded', label: 'Refused: monthly limit', color: '#7c2d12' },
  { code: 'sending_throttled', label: 'Refused: sending too fast', color: '#d97706' },
  { code: 'policy_violation', label: 'Refused: content or bulk', color: '#a32121' },
];
const ACCEPTED: ChartSeries = { key: 'accepted', label: 'Accepted', color: '#0b6b50' };
const OTHER_COLOR = '#6b7280';

export interface DecisionCount {
  day: string;
  decision: string;
  error_code: string | null;
  n: number;
}

/** The chart's series with the code each refusal stands for (the table's note names them). */
export interface SendsChart extends Chart {
  codes: Array<{ label: string; code: string }>;
}

/**
 * Sends per day, by outcome: accepted at the bottom, then each refusal code that occurs in the
 * period, in the policy's order (codes it does not know come last, by name, in grey).
 */
export function sendsChart(rows: readonly DecisionCount[], period: Period, calendar: string): SendsChart {
  const values = new Map(period.keys.map((key) => [key, {} as Record<string, number>]));
  const codes = new Set<string>();
  for (const row of rows) {
    const day = values.get(row.day);
    if (!day) continue;
    const key = row.decision === 'accepted' ? 'accepted' : (row.error_code ?? 'unknown');
    if (key !== 'accepted') codes.add(key);
    day[key] = (day[key] ?? 0) + row.n;
  }
  const known = REFUSALS.filter((r) => codes.has(r.code));
  const unknown = [...codes].filter((c) => !REFUSALS.some((r) => r.code === c)).sort();
  const refusals: ChartSeries[] = [
    ...known.map((r) => ({ key: r.code, label: r.label, color: r.color })),
    ...unknown.map((code) => ({ key: code, label: `Refused: ${code.replace(/_/g, ' ')}`, color: OTHER_COLOR })),
  ];
  const categories: ChartCategory[] = period.keys.map((key) => ({ key, ...dayLabels(key), values: values.get(key)! }));
  const chart = stackedBarChart({
    id: 'sends-chart',
    title: `Messages per day, last ${period.keys.length} days`,
    xLabel: `Day (${calendar})`,
    yLabel: 'Messages',
    series: [ACCEPTED, ...refusals],
    categories,
    emptyMessage: `No sends yet in the last ${period.keys.length} days. Once your systems send through the API (or a test send from an instance's page), each day's accepted and refused messages show here.`,
    labelEvery: 5,
  });
  return { ...chart, codes: refusals.map((r) => ({ label: r.label, code: r.key })) };
}

export interface WeekCount {
  week: string;
  n: number;
}

/** Opt-outs per week (recipients who replied with an opt-out keyword). */
export function optOutsChart(rows: readonly WeekCount[], period: Period): Chart {
  const byWeek = new Map(rows.map((r) => [r.week, r.n]));
  const categories: ChartCategory[] = period.keys.map((key) => {
    const labels = dayLabels(key);
    return { key, label: labels.label, longLabel: `Week of ${labels.longLabel}`, values: { opt_out: byWeek.get(key) ?? 0 } };
  });
  return stackedBarChart({
    id: 'opt-outs-chart',
    title: `Opt-outs per week, last ${period.keys.length} weeks`,
    xLabel: 'Week starting Monday (UTC)',
    yLabel: 'Opt-outs',
    series: [{ key: 'opt_out', label: 'Opt-outs', color: '#7c3aed' }],
    categories,
    emptyMessage: `No opt-outs in the last ${period.keys.length} weeks.`,
    labelEvery: 2,
  });
}

export interface QuotaView {
  used: number;
  limit: number;
  /** What is left, never below 0. */
  left: number;
  /** "412 of 1,000 today" */
  text: string;
  /** 0 to 100 (the bar), capped. */
  percent: number;
  /** The bar's thresholds (meter low and high, lower is better): amber from 80 %, red at the limit. */
  low: number;
  high: number;
  tone: 'good' | 'warn' | 'bad';
  window: string;
  resetsAt: string;
}

export function quotaView(used: number, limit: number, period: 'day' | 'month', window: string, resetsAt: number): QuotaView {
  const percent = limit <= 0 ? 100 : Math.min(100, Math.round((used / limit) * 1000) / 10);
  return {
    used,
    limit,
    left: Math.max(0, limit - used),
    text: `${count(used)} of ${count(limit)} ${period === 'day' ? 'today' : 'this month'}`,
    percent,
    low: limit * 0.8,
    high: Math.max(limit * 0.8, limit - 0.5),
    tone: used >= limit ? 'bad' : used >= limit * 0.8 ? 'warn' : 'good',
    window,
    resetsAt: utcMinute(resetsAt),
  };
}

export interface PlanFacts {
  /** null: no plan the engine knows. */
  name: string | null;
  planId: string | null;
  validUntil: string | null;
  /** The plan's period has ended: every send is refused. */
  ended: boolean;
  /** Who granted the override in force (higher limits after review); null without one. */
  overriddenBy: string | null;
  calendar: string;
}

export function planFacts(state: CustomerPolicyState, plan: EffectivePlan | null, now: number, defaultOffset: number): PlanFacts {
  const validUntil = state.plan.validUntil;
  return {
    name: plan?.plan.name ?? null,
    planId: state.plan.planId,
    validUntil: validUntil === null ? null : utcMinute(validUntil),
    ended: plan !== null && (validUntil === null || now >= validUntil),
    overriddenBy: plan?.overriddenBy ?? null,
    calendar: calendarName(plan?.quotaWindowOffsetMinutes ?? defaultOffset),
  };
}

export interface InstanceRef {
  id: string;
  name: string;
}

export interface VelocityView {
  burst: string;
  refill: string;
  recipientInterval: string;
  instances: Array<{ id: string; name: string; tokens: number; burst: number; text: string; full: boolean }>;
}

/**
 * The velocity limits in words and, per instance, the sends its token bucket allows now: the
 * level the engine folded last, refilled to now by the engine's own bucketAt. An instance that
 * has not sent for a day has no bucket in the state, which the engine counts as full.
 */
export function velocityView(plan: EffectivePlan, state: CustomerPolicyState, instances: readonly InstanceRef[], now: number): VelocityView {
  const limits = plan.velocity;
  return {
    burst: `Up to ${count(limits.burst)} messages at once from each instance`,
    refill: `${count(limits.refillPerMinute)} more messages a minute from each instance after that`,
    recipientInterval: `At least ${duration(limits.recipientMinIntervalMs)} between two messages from one instance to the same recipient`,
    instances: instances.map((instance) => {
      const bucket = bucketOf(state.instances, instance.id);
      const tokens = Math.max(0, Math.floor(bucketAt(bucket, now, limits).tokens + 1e-9));
      const full = tokens >= limits.burst;
      return {
        id: instance.id,
        name: instance.name,
        tokens,
        burst: limits.burst,
        full,
        text: `${count(tokens)} of ${count(limits.burst)} available now${full ? '' : `, ${count(limits.refillPerMinute)} more a minute`}`,
      };
    }),
  };
}

const SIGNALS: Record<QualitySignal['signal'], { what: string; of: string }> = {
  violation_rate: { what: 'Messages refused for their content', of: 'messages whose content was checked' },
  opt_out_rate: { what: 'Recipients who opted out', of: 'messages sent' },
  delivery_failure_rate: { what: 'Failed deliveries', of: 'delivery outcomes' },
};


export interface SignalView {
  signal: string;
  what: string;
  /** "6 of 100 messages sent (6 %); pauses from 5 % once there are 40" */
  text: string;
  crossed: boolean;
}

export function signalView(s: QualitySignal): SignalView {
  const words = SIGNALS[s.signal] ?? { what: s.signal.replace(/_/g, ' '), of: 'messages' };
  return {
    signal: s.signal,
    what: words.what,
    text: `${count(s.count)} of ${count(s.volume)} ${words.of} (${percent(s.rate)}); the review starts at ${percent(s.threshold)} once there are at least ${count(s.minVolume)}`,
    crossed: s.crossed,
  };
}

export interface PauseView {
  id: string;
  name: string;
  paused: boolean;
  since: string | null;
  /** Who paused it, in words. */
  by: string | null;
  /** Why, in words. */
  why: string | null;
  signals: SignalView[];
}

/** Each live instance: sending, or paused for review with when, by whom, why and the signals recorded. */
export function pauseViews(state: CustomerPolicyState, instances: readonly InstanceRef[]): PauseView[] {
  return instances.map((instance) => {
    const pause = state.paused[instance.id];
    if (!pause) return { id: instance.id, name: instance.name, paused: false, since: null, by: null, why: null, signals: [] };
    const signals = (pause.signals ?? []).map(signalView);
    const auto = pause.by === 'auto';
    const crossed = signals.filter((s) => s.crossed).map((s) => s.what.toLowerCase());
    return {
      id: instance.id,
      name: instance.name,
      paused: true,
      since: utcMinute(pause.at),
      by: auto ? "the gateway's automatic quality check" : `our review team (${pause.by})`,
      why: auto && crossed.length > 0 ? `Too many problems in the last hours: ${crossed.join('; ')}.` : pause.reason,
      signals,
    };
  });
}
