import type { Pool } from '@gw/db';
import type { SendProgress } from './outcome.ts';

type Row = { command_id: string; decision_event: SendProgress['decision']; outcome_event: SendProgress['delivery'] };

/** Reads commands' progress from the projections in one statement: the fallback when a reply was missed. */
export async function loadProgressMany(pool: Pool, commandIds: string[]): Promise<Map<string, SendProgress>> {
  if (commandIds.length === 0) return new Map();
  const result = await pool.query<Row>(
    `SELECT p.command_id, p.decision_event, d.outcome_event
       FROM policy_log p LEFT JOIN deliveries d ON d.command_id = p.command_id
      WHERE p.command_id = ANY($1::text[])`,
    [commandIds],
  );
  return new Map(result.rows.map((row) => [row.command_id, { decision: row.decision_event ?? null, delivery: row.outcome_event ?? null }]));
}

/** One command's progress from the projections. */
export async function loadProgress(pool: Pool, commandId: string): Promise<SendProgress> {
  return (await loadProgressMany(pool, [commandId])).get(commandId) ?? { decision: null, delivery: null };
}

/** Whether the policy engine has decided the command (its policy-log row exists). */
export async function commandDecided(pool: Pool, commandId: string): Promise<boolean> {
  const result = await pool.query('SELECT 1 FROM policy_log WHERE command_id = $1', [commandId]);
  return (result.rowCount ?? 0) > 0;
}
