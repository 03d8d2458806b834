// The progress read: what the policy and delivery stages have recorded of a send command, read
// from their projections in Postgres. The send path is the command side and would rather answer
// from the reply events alone, but it cannot: the reply router reads the decision and delivery
// topics from the moment its process started, so a reply appended while it was down (a restart),
// or long before (an idempotent retry of yesterday's request), is only found here.
//
// Tables read (owned by other stages; docs/architecture.md):
// - `policy_log` (policy stage): `decision_event`, the SendDecided as appended, one row per command id;
// - `deliveries` (delivery stage): `outcome_event`, the MessageDispatched or DeliveryFailed as appended.
import { sql, z, type Queryable } from '@gw/db';
import type { SendProgress } from './outcome.ts';

// The events the policy and delivery stages stored as they appended them: trusted, not re-checked.
const StoredProgress = z.object({
  command_id: z.string(),
  decision_event: z.custom<NonNullable<SendProgress['decision']>>().nullable(),
  outcome_event: z.custom<NonNullable<SendProgress['delivery']>>().nullable(),
});

/** Reads commands' progress from the projections in one statement: the fallback when a reply was missed. */
export async function loadProgressMany(pool: Queryable, commandIds: string[]): Promise<Map<string, SendProgress>> {
  if (commandIds.length === 0) return new Map();
  const rows = await pool.any(sql.type(StoredProgress)`
    SELECT p.command_id, p.decision_event, d.outcome_event
      FROM policy_log p LEFT JOIN deliveries d ON d.command_id = p.command_id
     WHERE p.command_id = ANY(${sql.array(commandIds, 'text')})`);
  return new Map(rows.map((row) => [row.command_id, { decision: row.decision_event ?? null, delivery: row.outcome_event ?? null }]));
}

/** One command's progress from the projections. */
export async function loadProgress(pool: Queryable, commandId: string): Promise<SendProgress> {
  return (await loadProgressMany(pool, [commandId])).get(commandId) ?? { decision: null, delivery: null };
}

/** Whether the policy engine has decided the command (its policy-log row exists). */
export async function commandDecided(pool: Queryable, commandId: string): Promise<boolean> {
  return pool.exists(sql.typeAlias('void')`SELECT FROM policy_log WHERE command_id = ${commandId}`);
}
