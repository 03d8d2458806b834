// What the messages pages read, always within one customer: the policy log (one row per
// decision), the delivery of each accepted message (deliveries, never its kept recipient or
// text), the chat network's receipts for it (message_receipts, by instance and provider message
// id), and the webhook deliveries that told the customer about it, with every attempt.
import { WebhookAttemptRow } from '@gw/accounts';
import { readSnapshot, sql, z, type Pool, type Queryable } from '@gw/db';
import { PAGE_SIZE } from '../pager.ts';
import type { MessageSearch } from './search.ts';

const ResultRow = z.object({
  log_id: z.number(),
  message_id: z.string(),
  recipient: z.string(),
  message_purpose: z.string(),
  decision: z.string(),
  error_code: z.string().nullable(),
  error_message: z.string().nullable(),
  decided_at: z.date(),
  delivery_state: z.string().nullable(),
  failure_reason: z.string().nullable(),
  receipts: z.array(z.string()),
});
export type ResultRow = z.infer<typeof ResultRow>;

/**
 * One page of the customer's decisions matching the search, newest first, with the delivery
 * state of each; `more` says whether another page follows.
 */
export async function searchMessages(db: Queryable, customerId: string, search: MessageSearch): Promise<{ rows: ResultRow[]; more: boolean }> {
  const conditions = [sql.fragment`p.customer_id = ${customerId}`];
  if (search.messageId !== null) conditions.push(sql.fragment`p.message_id = ${search.messageId}`);
  if (search.logId !== null) conditions.push(sql.fragment`p.log_id = ${search.logId}`);
  if (search.phone) {
    // Digits only (checked by parseSearch): nothing in the pattern is a LIKE wildcard.
    const contains = `%${search.phone.digits}%`;
    conditions.push(search.phone.exact ? sql.fragment`(p.recipient = ${search.phone.exact} OR p.recipient LIKE ${contains})` : sql.fragment`p.recipient LIKE ${contains}`);
  }
  if (search.from) conditions.push(sql.fragment`p.decided_at >= ${search.from.toISOString()}::timestamptz`);
  if (search.before) conditions.push(sql.fragment`p.decided_at < ${search.before.toISOString()}::timestamptz`);
  if (search.decision !== 'all') conditions.push(sql.fragment`p.decision = ${search.decision === 'accepted' ? 'accepted' : 'rejected'}`);
  const rows = await db.any(sql.type(ResultRow)`
    SELECT p.log_id, p.message_id, p.recipient, p.message_purpose, p.decision, p.error_code, p.error_message, p.decided_at,
           d.state AS delivery_state, d.failure_reason,
           COALESCE((SELECT array_agg(r.status ORDER BY r.at) FROM message_receipts r
                      WHERE r.instance_id = d.instance_id AND r.provider_message_id = d.provider_message_id), '{}'::text[]) AS receipts
      FROM policy_log p
      LEFT JOIN deliveries d ON d.message_id = p.message_id AND d.customer_id = p.customer_id
     WHERE ${sql.join(conditions, sql.fragment` AND `)}
     ORDER BY p.decided_at DESC, p.log_id DESC
     LIMIT ${PAGE_SIZE + 1} OFFSET ${(search.page - 1) * PAGE_SIZE}`);
  return { rows: rows.slice(0, PAGE_SIZE), more: rows.length > PAGE_SIZE };
}

const Entry = z.object({
  log_id: z.number(),
  message_id: z.string(),
  instance_id: z.string(),
  instance_name: z.string().nullable(),
  instance_deleted: z.boolean(),
  recipient: z.string(),
  message_purpose: z.string(),
  decision: z.string(),
  error_code: z.string().nullable(),
  error_message: z.string().nullable(),
  // jsonb as the policy consumer wrote it ([{ rule, outcome, detail }]); read defensively by ruleRows.
  reasons: z.unknown(),
  policy_version: z.string(),
  decided_at: z.date(),
  entry_hash: z.string(),
});
export type Entry = z.infer<typeof Entry>;

const Delivery = z.object({
  instance_id: z.string(),
  state: z.string(),
  provider_message_id: z.string().nullable(),
  failure_reason: z.string().nullable(),
  failure_detail: z.string().nullable(),
  attempt: z.number(),
  created_at: z.date(),
  updated_at: z.date(),
});
export type Delivery = z.infer<typeof Delivery>;

const Receipt = z.object({ status: z.string(), at: z.date() });
export type Receipt = z.infer<typeof Receipt>;

const WebhookDelivery = z.object({
  delivery_id: z.string(),
  instance_id: z.string(),
  event: z.string(),
  state: z.string(),
  occurred_at: z.date(),
  next_attempt_at: z.date(),
});
export type WebhookDelivery = z.infer<typeof WebhookDelivery>;

// What the webhooks service records of each attempt, without the receiver's answer (the timeline shows the outcome, not the body).
const WebhookAttempt = WebhookAttemptRow.omit({ response_snippet: true });
export type WebhookAttempt = z.infer<typeof WebhookAttempt>;

/**
 * The events that name a message of ours by `message_id` in their body, and those that name the
 * chat network's id for it (`external_message_id`, the deliveries row's provider_message_id):
 * exactly the predicates of the partial indexes of migration 1700000001700, which the lookups
 * below must repeat word for word to use them.
 */
const BY_MESSAGE_ID = sql.fragment`w.event IN ('message.sent', 'message.failed')`;
const BY_EXTERNAL_ID = sql.fragment`w.event IN ('message.delivered', 'message.read', 'message.status_updated', 'message.failed')`;

/**
 * The ids of the customer's webhook deliveries about one message: those naming it by message_id
 * (message.sent, message.failed) and those naming its provider id on its instance (receipts).
 * Each part uses one of the partial expression indexes of migration 1700000001700.
 */
export function webhookDeliveryIds(customerId: string, messageId: string, delivery: Pick<Delivery, 'instance_id' | 'provider_message_id'> | null) {
  const lookups = [
    sql.fragment`SELECT w.delivery_id FROM webhook_deliveries w
                  WHERE w.customer_id = ${customerId} AND ${BY_MESSAGE_ID} AND (w.body::jsonb) ->> 'message_id' = ${messageId}`,
  ];
  if (delivery?.provider_message_id) {
    lookups.push(sql.fragment`SELECT w.delivery_id FROM webhook_deliveries w
                  WHERE w.instance_id = ${delivery.instance_id} AND ${BY_EXTERNAL_ID} AND (w.body::jsonb) ->> 'external_message_id' = ${delivery.provider_message_id}
                    AND w.customer_id = ${customerId}`);
  }
  return sql.join(lookups, sql.fragment` UNION `);
}

export interface Timeline {
  entry: Entry;
  delivery: Delivery | null;
  receipts: Receipt[];
  webhooks: WebhookDelivery[];
  attempts: WebhookAttempt[];
}

/**
 * Everything about one of the customer's messages; null when the customer has no such message.
 * Read in one snapshot, so the parts agree (a webhook attempt is never shown beside its delivery's
 * state from before it, nor a receipt beside the delivery before it was sent).
 */
export function loadTimeline(pool: Pool, customerId: string, messageId: string): Promise<Timeline | null> {
  return readSnapshot(pool, (tx) => readTimeline(tx, customerId, messageId));
}

async function readTimeline(db: Queryable, customerId: string, messageId: string): Promise<Timeline | null> {
  const entry = await db.maybeOne(sql.type(Entry)`
    SELECT p.log_id, p.message_id, p.instance_id, i.name AS instance_name, (i.deleted_at IS NOT NULL) AS instance_deleted,
           p.recipient, p.message_purpose, p.decision, p.error_code, p.error_message, p.reasons, p.policy_version, p.decided_at, p.entry_hash
      FROM policy_log p
      LEFT JOIN instances i ON i.id = p.instance_id AND i.customer_id = p.customer_id
     WHERE p.customer_id = ${customerId} AND p.message_id = ${messageId}
     ORDER BY p.log_id
     LIMIT 1`);
  if (!entry) return null;
  // Never dispatch_phone or dispatch_text: the text is kept only while a send is open, and never shown.
  const delivery = await db.maybeOne(sql.type(Delivery)`
    SELECT instance_id, state, provider_message_id, failure_reason, failure_detail, attempt, created_at, updated_at
      FROM deliveries
     WHERE customer_id = ${customerId} AND message_id = ${messageId}`);
  const provider = delivery?.provider_message_id ?? null;
  const receipts = provider
    ? await db.any(sql.type(Receipt)`
        SELECT status, at FROM message_receipts WHERE instance_id = ${delivery!.instance_id} AND provider_message_id = ${provider} ORDER BY at, status`)
    : [];
  const webhooks = await db.any(sql.type(WebhookDelivery)`
    SELECT w.delivery_id, w.instance_id, w.event, w.state, w.occurred_at, w.next_attempt_at
      FROM webhook_deliveries w
     WHERE w.delivery_id IN (${webhookDeliveryIds(customerId, messageId, delivery)})
     ORDER BY w.occurred_at, w.created_at, w.delivery_id
     LIMIT 100`);
  const attempts =
    webhooks.length === 0
      ? []
      : await db.any(sql.type(WebhookAttempt)`
          SELECT delivery_id, attempt, attempted_at, status_code, latency_ms, error, outcome, next_attempt_at
            FROM webhook_attempts
           WHERE delivery_id = ANY(${sql.array(webhooks.map((w) => w.delivery_id), 'text')})
           ORDER BY delivery_id, attempt, id`);
  return { entry, delivery, receipts: [...receipts], webhooks: [...webhooks], attempts: [...attempts] };
}
