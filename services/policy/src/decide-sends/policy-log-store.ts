import type { PoolClient } from '@gw/db';
import type { SendDecided } from '@gw/events';

/** The Postgres projection of the policy log, written in the same transaction as the decision. */
export async function findDecision(client: PoolClient, commandId: string): Promise<SendDecided | null> {
  const result = await client.query<{ decision_event: SendDecided }>('SELECT decision_event FROM policy_log WHERE command_id = $1', [commandId]);
  return result.rows[0]?.decision_event ?? null;
}

export async function nextLogId(client: PoolClient): Promise<number> {
  const result = await client.query<{ id: number }>("SELECT nextval('policy_log_log_id_seq') AS id");
  return Number(result.rows[0]!.id);
}
