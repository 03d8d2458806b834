import type { Pool } from '@gw/db';
import type { DeliveryFailed, MessageDispatched, SendDecided } from '@gw/events';

export type DeliveryOutcome = { type: 'MessageDispatched'; payload: MessageDispatched } | { type: 'DeliveryFailed'; payload: DeliveryFailed };

/**
 * Claims the decisions of a batch for sending: a row is inserted per message before any send, so
 * a redelivered decision finds it and is never sent a second time. Returns the message ids claimed now.
 */
export async function claim(pool: Pool, decisions: SendDecided[]): Promise<Set<string>> {
  if (decisions.length === 0) return new Set();
  const result = await pool.query<{ message_id: string }>(
    `INSERT INTO deliveries (message_id, command_id, customer_id, instance_id, log_id, state)
     SELECT m, c, cu, i, l, 'dispatching' FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[]) AS t(m, c, cu, i, l)
     ON CONFLICT DO NOTHING
     RETURNING message_id`,
    [
      decisions.map((d) => d.message_id),
      decisions.map((d) => d.correlation_id),
      decisions.map((d) => d.customer_id),
      decisions.map((d) => d.instance_id),
      decisions.map((d) => d.log_id),
    ],
  );
  return new Set(result.rows.map((r) => r.message_id));
}

export async function recordedOutcomes(pool: Pool, messageIds: string[]): Promise<Map<string, { state: string; outcome: DeliveryOutcome | null }>> {
  const result = await pool.query<{ message_id: string; state: string; outcome_event: DeliveryOutcome | null }>(
    'SELECT message_id, state, outcome_event FROM deliveries WHERE message_id = ANY($1::text[])',
    [messageIds],
  );
  return new Map(result.rows.map((r) => [r.message_id, { state: r.state, outcome: r.outcome_event }]));
}

export async function recordOutcome(pool: Pool, messageId: string, outcome: DeliveryOutcome | null, detail: string | null): Promise<void> {
  if (!outcome) {
    await pool.query(`UPDATE deliveries SET state = 'unknown', failure_detail = $2, updated_at = now() WHERE message_id = $1`, [messageId, detail]);
    return;
  }
  const dispatched = outcome.type === 'MessageDispatched';
  await pool.query(
    `UPDATE deliveries SET state = $2, provider_message_id = $3, failure_reason = $4, failure_detail = $5,
       outcome_event = $6, updated_at = now() WHERE message_id = $1`,
    [
      messageId,
      dispatched ? 'dispatched' : 'failed',
      dispatched ? outcome.payload.provider_message_id : null,
      dispatched ? null : outcome.payload.reason,
      dispatched ? null : outcome.payload.detail,
      JSON.stringify(outcome),
    ],
  );
}
