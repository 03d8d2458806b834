import type { Pool } from '@gw/db';
import type { SendProgress } from './outcome.ts';

/** Reads a command's progress from the projections: the fallback when a reply was missed. */
export async function loadProgress(pool: Pool, commandId: string): Promise<SendProgress> {
  const result = await pool.query<{ decision_event: SendProgress['decision']; outcome_event: SendProgress['delivery'] }>(
    `SELECT p.decision_event, d.outcome_event
       FROM policy_log p LEFT JOIN deliveries d ON d.command_id = p.command_id
      WHERE p.command_id = $1`,
    [commandId],
  );
  const row = result.rows[0];
  return { decision: row?.decision_event ?? null, delivery: row?.outcome_event ?? null };
}
