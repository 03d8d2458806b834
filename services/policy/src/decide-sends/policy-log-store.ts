import type { PoolClient } from '@gw/db';
import type { SendDecided } from '@gw/events';

/** The recorded decisions of the given commands (one query for a whole batch). */
export async function findDecisions(client: PoolClient, commandIds: string[]): Promise<Map<string, SendDecided>> {
  if (commandIds.length === 0) return new Map();
  const result = await client.query<{ command_id: string; decision_event: SendDecided }>(
    'SELECT command_id, decision_event FROM policy_log WHERE command_id = ANY($1::text[])',
    [commandIds],
  );
  return new Map(result.rows.map((r) => [r.command_id, r.decision_event]));
}

/** Allocates `count` policy-log ids at once, in increasing order. */
export async function allocateLogIds(client: PoolClient, count: number): Promise<number[]> {
  if (count === 0) return [];
  const result = await client.query<{ id: number }>("SELECT nextval('policy_log_log_id_seq') AS id FROM generate_series(1, $1) ORDER BY 1", [count]);
  return result.rows.map((r) => Number(r.id));
}
