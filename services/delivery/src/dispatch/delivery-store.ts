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

export interface RecordedOutcome {
  messageId: string;
  /** null: the outcome is unknown (the send may or may not have happened). */
  outcome: DeliveryOutcome | null;
  detail: string | null;
}

/** Records the outcomes of a batch's sends in one statement. */
export async function recordOutcomes(pool: Pool, rows: RecordedOutcome[]): Promise<void> {
  if (rows.length === 0) return;
  const field = <T>(pick: (row: RecordedOutcome) => T) => rows.map(pick);
  await pool.query(
    `UPDATE deliveries AS d SET state = u.state, provider_message_id = u.provider_id, failure_reason = u.reason,
       failure_detail = u.detail, outcome_event = u.outcome, updated_at = now()
     FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::jsonb[]) AS u(message_id, state, provider_id, reason, detail, outcome)
     WHERE d.message_id = u.message_id`,
    [
      field((r) => r.messageId),
      field((r) => (!r.outcome ? 'unknown' : r.outcome.type === 'MessageDispatched' ? 'dispatched' : 'failed')),
      field((r) => (r.outcome?.type === 'MessageDispatched' ? r.outcome.payload.provider_message_id : null)),
      field((r) => (r.outcome?.type === 'DeliveryFailed' ? r.outcome.payload.reason : null)),
      field((r) => (r.outcome?.type === 'DeliveryFailed' ? r.outcome.payload.detail : r.detail)),
      field((r) => (r.outcome ? JSON.stringify(r.outcome) : null)),
    ],
  );
}
