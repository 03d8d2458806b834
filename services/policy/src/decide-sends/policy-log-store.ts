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

export async function insertDecision(client: PoolClient, event: SendDecided): Promise<void> {
  await client.query(
    `INSERT INTO policy_log (log_id, command_id, event_id, customer_id, instance_id, message_id, recipient,
       message_purpose, message_digest, decision, error_code, error_message, reasons, policy_version,
       decided_at, decision_event, partition_chain, prev_hash, entry_hash)
     VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,to_timestamp($15 / 1000.0),$16,$17,$18,$19)
     ON CONFLICT (log_id) DO NOTHING`,
    [
      event.log_id,
      event.correlation_id,
      event.event_id,
      event.customer_id,
      event.instance_id,
      event.message_id,
      event.recipient,
      event.message_purpose,
      event.message_digest,
      event.decision,
      event.error_code,
      event.error_message,
      JSON.stringify(event.reasons),
      event.policy_version,
      event.occurred_at,
      // The stored copy has no message text: the policy log keeps a digest, not the body.
      JSON.stringify({ ...event, dispatch: event.dispatch ? { ...event.dispatch, text: null } : null }),
      event.partition_chain,
      event.prev_hash,
      event.entry_hash,
    ],
  );
}
