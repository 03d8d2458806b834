import { sql, z, type Queryable } from '@gw/db';
import type { DeliveryFailed, MessageDispatched } from '@gw/events';
import type { SendTask } from './outcomes.ts';

export type DeliveryOutcome = { type: 'MessageDispatched'; payload: MessageDispatched } | { type: 'DeliveryFailed'; payload: DeliveryFailed };

const MessageId = z.object({ message_id: z.string() });
// outcome_event is the outcome this service wrote (recordOutcomes): trusted, not re-checked.
const RecordedOutcome = z.object({ message_id: z.string(), state: z.string(), outcome_event: z.custom<DeliveryOutcome>().nullable(), outcome_appended: z.boolean() });

/**
 * Claims the sends of a batch: a row is inserted per message before any send, so a redelivered
 * decision finds it and is never sent a second time. The dispatch phone and text are kept on the
 * row while its outcome is open (the resolver needs them); the recipient, purpose and instance
 * name for good (the resolver's outcomes carry them, and it finds a recipient's other sends by
 * them). Returns the message ids claimed now. Each message id must appear once in `tasks`.
 */
export async function claim(db: Queryable, tasks: SendTask[]): Promise<Set<string>> {
  if (tasks.length === 0) return new Set();
  const tuples = tasks.map((t) => [t.messageId, t.commandId, t.customerId, t.instanceId, t.logId, t.phone, t.text, t.recipient, t.purpose, t.instanceName]);
  const claimed = await db.anyFirst(sql.type(MessageId)`
    INSERT INTO deliveries (message_id, command_id, customer_id, instance_id, log_id, state, dispatch_phone, dispatch_text, recipient, message_purpose, instance_name)
    SELECT m, c, cu, i, l, 'dispatching', ph, tx, r, pu, n
      FROM ${sql.unnest(tuples, ['text', 'text', 'text', 'text', 'int8', 'text', 'text', 'text', 'text', 'text'])} AS t(m, c, cu, i, l, ph, tx, r, pu, n)
    ON CONFLICT DO NOTHING
    RETURNING message_id`);
  return new Set(claimed);
}

/**
 * The recorded outcome of each message (null while it is open: dispatching or unknown), and
 * whether it was appended to delivery-events before its row committed (`appended`: the
 * resolver's way; the stage's outcomes go out with its batch, after the row).
 */
export async function recordedOutcomes(db: Queryable, messageIds: string[]): Promise<Map<string, { state: string; outcome: DeliveryOutcome | null; appended: boolean }>> {
  const rows = await db.any(sql.type(RecordedOutcome)`
    SELECT message_id, state, outcome_event, outcome_appended FROM deliveries WHERE message_id = ANY(${sql.array(messageIds, 'text')})`);
  return new Map(rows.map((r) => [r.message_id, { state: r.state, outcome: r.outcome_event, appended: r.outcome_appended }]));
}

export interface AttemptOutcome {
  messageId: string;
  /** The attempt this outcome belongs to: recorded only while it is still the row's attempt. */
  attempt: number;
  /** null: the outcome is unknown (the send may or may not have happened); the resolver takes it. */
  outcome: DeliveryOutcome | null;
  detail: string | null;
  /** The outcome's records are appended before the row commits (the resolver): a redelivered decision does not append them again. */
  appended?: boolean;
}

const stateOf = (r: AttemptOutcome) => (!r.outcome ? 'unknown' : r.outcome.type === 'MessageDispatched' ? 'dispatched' : 'failed');

/**
 * Records the outcomes of attempts in one statement, each only if its attempt is still the
 * message's current and open one (a late answer of an attempt the resolver gave up on changes
 * nothing). A known outcome clears the kept recipient and text. Returns the message ids recorded.
 */
export async function recordOutcomes(db: Queryable, rows: AttemptOutcome[]): Promise<Set<string>> {
  if (rows.length === 0) return new Set();
  // The outcomes go as JSON text in a jsonb[] (sql.json and jsonOf bind one value, not an array of them).
  const tuples = rows.map((r) => [
    r.messageId,
    r.attempt,
    stateOf(r),
    r.outcome?.type === 'MessageDispatched' ? r.outcome.payload.provider_message_id : null,
    r.outcome?.type === 'DeliveryFailed' ? r.outcome.payload.reason : null,
    r.outcome?.type === 'DeliveryFailed' ? r.outcome.payload.detail : r.detail,
    r.outcome ? JSON.stringify(r.outcome) : null,
    r.appended === true,
  ]);
  const recorded = await db.anyFirst(sql.type(MessageId)`
    UPDATE deliveries AS d SET state = u.state, provider_message_id = u.provider_id, failure_reason = u.reason,
      failure_detail = u.detail, outcome_event = u.outcome, outcome_appended = u.appended, updated_at = now(),
      dispatch_phone = CASE WHEN u.state = 'unknown' THEN d.dispatch_phone END,
      dispatch_text = CASE WHEN u.state = 'unknown' THEN d.dispatch_text END
    FROM ${sql.unnest(tuples, ['text', 'int4', 'text', 'text', 'text', 'text', 'jsonb', 'bool'])} AS u(message_id, attempt, state, provider_id, reason, detail, outcome, appended)
    WHERE d.message_id = u.message_id AND d.attempt = u.attempt AND d.state IN ('dispatching', 'unknown')
    RETURNING d.message_id`);
  return new Set(recorded);
}
