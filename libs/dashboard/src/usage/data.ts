// What /usage reads, always within one customer: the folded policy state (`policy_state` and
// its tail, the engine's own: plan, override, buckets, pauses), the accepted sends of the quota
// windows (`quota_usage`), the suppressions by source, and the two charts' counts (`policy_log`
// by day and outcome, `suppression_history` opt-outs by week), and each instance's number guard
// (`instance_guard`: age, warm-up allowance, first contacts, restriction). All are projections the
// policy consumer writes.
import { sql, z, type Queryable } from '@gw/db';
import { initialPolicyState, type CustomerPolicyState } from '@gw/policy';
import { readPolicyState } from '@gw/policy-log';
import type { GuardRow } from './guard-view.ts';
import type { DecisionCount, WeekCount } from './view.ts';

/**
 * The customer's folded policy state; the state of a customer the engine has not heard of yet
 * when there is none (or one of a shape this code cannot read, which the engine itself refuses
 * and rebuilds: the page then shows no plan rather than failing).
 */
export async function policyStateOf(db: Queryable, customerId: string): Promise<CustomerPolicyState> {
  const state = await readPolicyState(db, customerId);
  return state && state.customerId === customerId ? state : initialPolicyState(customerId);
}

const Used = z.object({ window_key: z.string(), used: z.number() });

/** Accepted sends counted in these quota windows ('2026-11-22', '2026-11'); a window without a row is 0. */
export async function quotaUsed(db: Queryable, customerId: string, windows: readonly string[]): Promise<Map<string, number>> {
  const rows = await db.any(sql.type(Used)`
    SELECT window_key, used FROM quota_usage WHERE customer_id = ${customerId} AND window_key = ANY(${sql.array([...windows], 'text')})`);
  const used = new Map(windows.map((w) => [w, 0]));
  for (const row of rows) used.set(row.window_key, row.used);
  return used;
}

const BySource = z.object({ source: z.string(), n: z.number() });

/** Recipients suppressed now, by source: opted out (a keyword reply) and suppressed by hand. */
export async function suppressionCounts(db: Queryable, customerId: string): Promise<{ optOut: number; manual: number }> {
  const rows = await db.any(sql.type(BySource)`
    SELECT source, count(*)::int AS n FROM suppressions WHERE customer_id = ${customerId} GROUP BY source`);
  const of = (source: string) => rows.find((r) => r.source === source)?.n ?? 0;
  return { optOut: of('opt_out'), manual: of('manual') };
}

const DecisionRow = z.object({ day: z.string(), decision: z.string(), error_code: z.string().nullable(), n: z.number() });

/**
 * Decisions since `from`, by day of the quota calendar (UTC shifted by `offsetMinutes`, as the
 * policy's quotaWindows counts days), outcome and refusal code.
 */
export async function decisionsPerDay(db: Queryable, customerId: string, from: Date, offsetMinutes: number): Promise<readonly DecisionCount[]> {
  return db.any(sql.type(DecisionRow)`
    SELECT to_char((decided_at AT TIME ZONE 'UTC') + make_interval(mins => ${offsetMinutes}), 'YYYY-MM-DD') AS day,
           decision, error_code, count(*)::int AS n
      FROM policy_log
     WHERE customer_id = ${customerId} AND decided_at >= ${from.toISOString()}::timestamptz
     GROUP BY 1, 2, 3`);
}

const WeekRow = z.object({ week: z.string(), n: z.number() });

/** Opt-outs (keyword replies that suppressed a recipient) since `from`, by week (Monday, UTC). */
export async function optOutsPerWeek(db: Queryable, customerId: string, from: Date): Promise<readonly WeekCount[]> {
  return db.any(sql.type(WeekRow)`
    SELECT to_char(date_trunc('week', at AT TIME ZONE 'UTC'), 'YYYY-MM-DD') AS week, count(*)::int AS n
      FROM suppression_history
     WHERE customer_id = ${customerId} AND action = 'suppressed' AND source = 'opt_out' AND at >= ${from.toISOString()}::timestamptz
     GROUP BY 1`);
}

const Guard = z.object({
  instance_id: z.string(),
  first_connected_at: z.date().nullable(),
  age_days: z.number().nullable(),
  warm_up_allowance_today: z.number().nullable(),
  first_contacts_today: z.number(),
  first_contacts_left_today: z.number().nullable(),
  restricted_until: z.date().nullable(),
  restriction_signal: z.string().nullable(),
  restriction_signals: z.number(),
  updated_at: z.date(),
});

/**
 * The number guard of the customer's instances (or of one of them), as the policy consumer last
 * wrote it; an instance the guard has not heard of yet has no row.
 */
export async function instanceGuards(db: Queryable, customerId: string, instanceId?: string): Promise<readonly GuardRow[]> {
  const one = instanceId === undefined ? sql.fragment`` : sql.fragment`AND instance_id = ${instanceId}`;
  return db.any(sql.type(Guard)`
    SELECT instance_id, first_connected_at, age_days, warm_up_allowance_today, first_contacts_today, first_contacts_left_today,
           restricted_until, restriction_signal, restriction_signals, updated_at
      FROM instance_guard
     WHERE customer_id = ${customerId} ${one}`);
}
