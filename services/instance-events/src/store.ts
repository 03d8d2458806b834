import { sql, z, type Queryable } from '@gw/db';
import type { InboundMessage } from './map-event.ts';

const CallId = z.object({ call_id: z.string() });

/**
 * Connection projection: the newest report wins, a QR keeps the state it was shown in. Newest by
 * the manager's own time (`reportedAt`, the envelope's date_time) when both reports have one: the
 * manager posts without waiting and retries each post on its own (up to 10 times, backing off), so
 * a retried `connecting` can arrive after the `open` that followed it. Between reports of which one
 * has no time, the arrival time (`at`) decides. A tie goes to the later arrival.
 */
export async function saveConnection(db: Queryable, instanceId: string, change: { state: string | null; qrAvailable: boolean; reportedAt: number | null }, at: number): Promise<void> {
  const reported = change.reportedAt === null ? null : new Date(change.reportedAt).toISOString();
  await db.query(sql.typeAlias('void')`
    INSERT INTO instance_connections (instance_id, connection_state, qr_available, updated_at, reported_at)
    VALUES (${instanceId}, COALESCE(${change.state}, 'connecting'), ${change.qrAvailable}, to_timestamp(${at}::double precision / 1000), ${reported}::timestamptz)
    ON CONFLICT (instance_id) DO UPDATE
      SET connection_state = COALESCE(${change.state}, instance_connections.connection_state),
          qr_available = EXCLUDED.qr_available,
          updated_at = EXCLUDED.updated_at,
          reported_at = EXCLUDED.reported_at
    WHERE CASE WHEN instance_connections.reported_at IS NOT NULL AND EXCLUDED.reported_at IS NOT NULL
               THEN (instance_connections.reported_at, instance_connections.updated_at) <= (EXCLUDED.reported_at, EXCLUDED.updated_at)
               ELSE instance_connections.updated_at <= EXCLUDED.updated_at END`);
}

/** The lid → phone map of an instance (instance_lid_links); a newer report of a lid replaces an older one. */
export async function saveLidLinks(db: Queryable, instanceId: string, links: Array<{ lid: string; phone: string }>, at: number): Promise<void> {
  // One row per lid (the last pair of the envelope): one statement may not update a row twice.
  const byLid = new Map(links.map((l) => [l.lid, l.phone]));
  if (byLid.size === 0) return;
  await db.query(sql.typeAlias('void')`
    INSERT INTO instance_lid_links (instance_id, lid, phone, learned_at)
    SELECT ${instanceId}, lid, phone, to_timestamp(${at}::double precision / 1000)
      FROM ${sql.unnest([...byLid], ['text', 'text'])} AS t(lid, phone)
    ON CONFLICT (instance_id, lid) DO UPDATE SET phone = EXCLUDED.phone, learned_at = EXCLUDED.learned_at
    WHERE instance_lid_links.learned_at <= EXCLUDED.learned_at`);
}

/** The ids, among the calls of this event, already known to have been accepted. */
export async function acceptedCalls(db: Queryable, instanceId: string, data: unknown): Promise<Set<string>> {
  const ids = (Array.isArray(data) ? data : [data])
    .map((call) => (typeof call === 'object' && call !== null ? (call as { id?: unknown }).id : undefined))
    .filter((id): id is string => typeof id === 'string');
  if (ids.length === 0) return new Set();
  const accepted = await db.anyFirst(sql.type(CallId)`
    SELECT call_id FROM instance_calls WHERE instance_id = ${instanceId} AND call_id = ANY(${sql.array(ids, 'text')}) AND accepted`);
  return new Set(accepted);
}

export async function recordCalls(db: Queryable, instanceId: string, calls: Array<{ id: string; status: string }>): Promise<void> {
  for (const call of calls) {
    await db.query(sql.typeAlias('void')`
      INSERT INTO instance_calls (instance_id, call_id, accepted) VALUES (${instanceId}, ${call.id}, ${call.status === 'accept'})
      ON CONFLICT (instance_id, call_id) DO UPDATE SET accepted = instance_calls.accepted OR EXCLUDED.accepted, updated_at = now()`);
  }
}

/** What this stage knows of one of our sends, as the outcome events told it. */
export interface SendFacts {
  messageId: string;
  instanceId: string;
  customerId: string;
  recipient: string;
  purpose: string;
  instanceName: string;
  /** The manager's id of the message, once it accepted it. */
  providerMessageId: string | null;
  recordedAt: number;
}

const SendFactsRow = z.object({
  message_id: z.string(),
  instance_id: z.string(),
  customer_id: z.string(),
  recipient: z.string(),
  message_purpose: z.string(),
  instance_name: z.string(),
  provider_message_id: z.string().nullable(),
  recorded_ms: z.number(),
});
const toFacts = (r: z.infer<typeof SendFactsRow>): SendFacts => ({
  messageId: r.message_id,
  instanceId: r.instance_id,
  customerId: r.customer_id,
  recipient: r.recipient,
  purpose: r.message_purpose,
  instanceName: r.instance_name,
  providerMessageId: r.provider_message_id,
  recordedAt: r.recorded_ms,
});

/**
 * This stage's own projection of our sends (instance_send_facts), written from the outcome
 * events it consumes: a manager's later ERROR report names only the provider id. Keyed by the
 * message; a redelivered outcome changes nothing, and the provider id, once known, stays.
 */
export async function recordSendFacts(db: Queryable, facts: SendFacts[]): Promise<void> {
  // One row per message (a statement may not update a row twice); a dispatched copy wins.
  const byMessage = new Map<string, SendFacts>();
  for (const f of facts) if (!byMessage.get(f.messageId)?.providerMessageId) byMessage.set(f.messageId, f);
  if (byMessage.size === 0) return;
  await db.query(sql.typeAlias('void')`
    INSERT INTO instance_send_facts (message_id, instance_id, customer_id, recipient, message_purpose, instance_name, provider_message_id, recorded_at)
    SELECT message_id, instance_id, customer_id, recipient, message_purpose, instance_name, NULLIF(provider_message_id, ''), to_timestamp(at / 1000.0)
      FROM ${sql.unnest(
        [...byMessage.values()].map((f) => [f.messageId, f.instanceId, f.customerId, f.recipient, f.purpose, f.instanceName, f.providerMessageId ?? '', f.recordedAt]),
        ['text', 'text', 'text', 'text', 'text', 'text', 'text', 'float8'],
      )} AS t(message_id, instance_id, customer_id, recipient, message_purpose, instance_name, provider_message_id, at)
    ON CONFLICT (message_id) DO UPDATE
      SET provider_message_id = COALESCE(instance_send_facts.provider_message_id, EXCLUDED.provider_message_id)`);
}

/** What the projection knows of these messages (for outcome records written before the events carried the facts). */
export async function sendFactsOf(db: Queryable, messageIds: string[]): Promise<Map<string, SendFacts>> {
  if (messageIds.length === 0) return new Map();
  const rows = await db.any(sql.type(SendFactsRow)`
    SELECT message_id, instance_id, customer_id, recipient, message_purpose, instance_name, provider_message_id,
           (extract(epoch FROM recorded_at) * 1000)::float8 AS recorded_ms
      FROM instance_send_facts WHERE message_id = ANY(${sql.array(messageIds, 'text')})`);
  return new Map(rows.map((r) => [r.message_id, toFacts(r)]));
}

/** Our own send behind a provider message id, for message.failed; null: not a message we sent. */
export async function sentMessage(db: Queryable, instanceId: string, providerMessageId: string): Promise<SendFacts | null> {
  const row = await db.maybeOne(sql.type(SendFactsRow)`
    SELECT message_id, instance_id, customer_id, recipient, message_purpose, instance_name, provider_message_id,
           (extract(epoch FROM recorded_at) * 1000)::float8 AS recorded_ms
      FROM instance_send_facts WHERE instance_id = ${instanceId} AND provider_message_id = ${providerMessageId}
     ORDER BY recorded_at DESC LIMIT 1`);
  return row ? toFacts(row) : null;
}


/** An inbound_messages row: a received message under the id of the gateway event it became. */
export interface InboundRow extends Omit<InboundMessage, 'eventIndex'> {
  id: string;
  customerId: string;
  instanceId: string;
  receivedAt: number;
}

// Postgres text cannot hold NUL; anything else a sender typed is kept as it is.
const storable = (text: string) => text.replace(/\u0000/g, '\uFFFD');

/** The inbound log's projection. Keyed by the event id, so a redelivered batch adds nothing. */
export async function saveInbound(db: Queryable, rows: InboundRow[]): Promise<void> {
  if (rows.length === 0) return;
  await db.query(sql.typeAlias('void')`
    INSERT INTO inbound_messages (id, customer_id, instance_id, chat, sender, group_id, message_text, message_type, external_message_id, opt_action, received_at)
    SELECT id, customer_id, instance_id, chat, NULLIF(sender, ''), NULLIF(group_id, ''), message_text, NULLIF(message_type, ''), NULLIF(external_message_id, ''), NULLIF(opt_action, ''), to_timestamp(at / 1000.0)
      FROM ${sql.unnest(
        rows.map((r) => [r.id, r.customerId, r.instanceId, r.chat, r.sender ?? '', r.groupId ?? '', storable(r.text), storable(r.messageType ?? ''), storable(r.externalId ?? ''), r.optAction ?? '', r.receivedAt]),
        ['text', 'text', 'text', 'text', 'text', 'text', 'text', 'text', 'text', 'text', 'float8'],
      )} AS t(id, customer_id, instance_id, chat, sender, group_id, message_text, message_type, external_message_id, opt_action, at)
    ON CONFLICT (id) DO NOTHING`);
}

/** The manager's delivered/read reports; the first report of each status is kept. */
export async function saveReceipts(db: Queryable, instanceId: string, receipts: Array<{ externalId: string; status: string }>, at: number): Promise<void> {
  if (receipts.length === 0) return;
  await db.query(sql.typeAlias('void')`
    INSERT INTO message_receipts (instance_id, provider_message_id, status, at)
    SELECT ${instanceId}, provider_message_id, status, to_timestamp(${at}::double precision / 1000)
      FROM ${sql.unnest(receipts.map((r) => [storable(r.externalId), r.status]), ['text', 'text'])} AS t(provider_message_id, status)
    ON CONFLICT DO NOTHING`);
}

const Purged = z.object({ count: z.number() });

/**
 * Deletes inbound messages received before `before`, at most `limit` at a time (a short
 * statement that never holds the table for long); the purge job repeats it until none is left.
 */
export async function purgeInbound(db: Queryable, before: Date, limit: number): Promise<number> {
  return db.oneFirst(sql.type(Purged)`
    WITH gone AS (
      DELETE FROM inbound_messages WHERE id IN (SELECT id FROM inbound_messages WHERE received_at < ${before.toISOString()}::timestamptz LIMIT ${limit})
      RETURNING 1)
    SELECT count(*)::int AS count FROM gone`);
}
