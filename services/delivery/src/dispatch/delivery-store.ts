import type { Pool, PoolClient } from '@gw/db';
import type { DeliveryFailed, MessageDispatched, SendDecided } from '@gw/events';

export type DeliveryOutcome = { type: 'MessageDispatched'; payload: MessageDispatched } | { type: 'DeliveryFailed'; payload: DeliveryFailed };

type Queryable = Pool | PoolClient;

/**
 * Claims the decisions of a batch for sending: a row is inserted per message before any send, so
 * a redelivered decision finds it and is never sent a second time. The recipient and text are
 * kept on the row while its outcome is open (the resolver needs them). Returns the message ids
 * claimed now. Each message id must appear once in `decisions`.
 */
export async function claim(pool: Pool, decisions: SendDecided[]): Promise<Set<string>> {
  if (decisions.length === 0) return new Set();
  const result = await pool.query<{ message_id: string }>(
    `INSERT INTO deliveries (message_id, command_id, customer_id, instance_id, log_id, state, dispatch_phone, dispatch_text)
     SELECT m, c, cu, i, l, 'dispatching', ph, tx FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::text[], $7::text[]) AS t(m, c, cu, i, l, ph, tx)
     ON CONFLICT DO NOTHING
     RETURNING message_id`,
    [
      decisions.map((d) => d.message_id),
      decisions.map((d) => d.correlation_id),
      decisions.map((d) => d.customer_id),
      decisions.map((d) => d.instance_id),
      decisions.map((d) => d.log_id),
      decisions.map((d) => d.dispatch!.phone),
      decisions.map((d) => d.dispatch!.text),
    ],
  );
  return new Set(result.rows.map((r) => r.message_id));
}

/** The recorded outcome of each message (null while it is open: dispatching or unknown). */
export async function recordedOutcomes(pool: Pool, messageIds: string[]): Promise<Map<string, { state: string; outcome: DeliveryOutcome | null }>> {
  const result = await pool.query<{ message_id: string; state: string; outcome_event: DeliveryOutcome | null }>(
    'SELECT message_id, state, outcome_event FROM deliveries WHERE message_id = ANY($1::text[])',
    [messageIds],
  );
  return new Map(result.rows.map((r) => [r.message_id, { state: r.state, outcome: r.outcome_event }]));
}

export interface AttemptOutcome {
  messageId: string;
  /** The attempt this outcome belongs to: recorded only while it is still the row's attempt. */
  attempt: number;
  /** null: the outcome is unknown (the send may or may not have happened); the resolver takes it. */
  outcome: DeliveryOutcome | null;
  detail: string | null;
}

/**
 * Records the outcomes of attempts in one statement, each only if its attempt is still the
 * message's current and open one (a late answer of an attempt the resolver gave up on changes
 * nothing). A known outcome clears the kept recipient and text. Returns the message ids recorded.
 */
export async function recordOutcomes(db: Queryable, rows: AttemptOutcome[]): Promise<Set<string>> {
  if (rows.length === 0) return new Set();
  const field = <T>(pick: (row: AttemptOutcome) => T) => rows.map(pick);
  const result = await db.query<{ message_id: string }>(
    `UPDATE deliveries AS d SET state = u.state, provider_message_id = u.provider_id, failure_reason = u.reason,
       failure_detail = u.detail, outcome_event = u.outcome, updated_at = now(),
       dispatch_phone = CASE WHEN u.state = 'unknown' THEN d.dispatch_phone END,
       dispatch_text = CASE WHEN u.state = 'unknown' THEN d.dispatch_text END
     FROM unnest($1::text[], $2::int[], $3::text[], $4::text[], $5::text[], $6::text[], $7::jsonb[]) AS u(message_id, attempt, state, provider_id, reason, detail, outcome)
     WHERE d.message_id = u.message_id AND d.attempt = u.attempt AND d.state IN ('dispatching', 'unknown')
     RETURNING d.message_id`,
    [
      field((r) => r.messageId),
      field((r) => r.attempt),
      field((r) => (!r.outcome ? 'unknown' : r.outcome.type === 'MessageDispatched' ? 'dispatched' : 'failed')),
      field((r) => (r.outcome?.type === 'MessageDispatched' ? r.outcome.payload.provider_message_id : null)),
      field((r) => (r.outcome?.type === 'DeliveryFailed' ? r.outcome.payload.reason : null)),
      field((r) => (r.outcome?.type === 'DeliveryFailed' ? r.outcome.payload.detail : r.detail)),
      field((r) => (r.outcome ? JSON.stringify(r.outcome) : null)),
    ],
  );
  return new Set(result.rows.map((r) => r.message_id));
}
