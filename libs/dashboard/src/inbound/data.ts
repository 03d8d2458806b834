// What /inbound-logs reads: the customer's `inbound_messages` (written by the instance-events
// consumer, purged after INBOUND_LOG_RETENTION_DAYS), newest first, a page at a time by keyset
// (received time, id), with the instance's name and whether the sender is suppressed now.
import { sql, z, type Queryable } from '@gw/db';
import { containsPattern, phoneDigits } from '../query-values.ts';
import type { Cursor, InboundQuery } from './query.ts';

type Fragment = ReturnType<typeof sql.fragment> | ReturnType<typeof sql.join>;

export const InboundRow = z.object({
  id: z.string(),
  instance_id: z.string(),
  chat: z.string(),
  sender: z.string().nullable(),
  group_id: z.string().nullable(),
  message_text: z.string(),
  message_type: z.string().nullable(),
  opt_action: z.string().nullable(),
  received_at: z.date(),
  /** received_at to the microsecond: the page links' cursor. */
  at_key: z.string(),
  instance_name: z.string().nullable(),
  instance_deleted: z.boolean().nullable(),
  sender_suppressed: z.boolean(),
  /** For a sender known only by a linked id (`…@lid`): the phone the instance has since learned for it. */
  linked_phone: z.string().nullable(),
});
export type InboundRow = z.infer<typeof InboundRow>;

const COLUMNS = sql.fragment`
  m.id, m.instance_id, m.chat, m.sender, m.group_id, m.message_text, m.message_type, m.opt_action, m.received_at,
  to_char(m.received_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS at_key,
  i.name AS instance_name, (i.deleted_at IS NOT NULL) AS instance_deleted,
  EXISTS (SELECT 1 FROM suppressions s WHERE s.customer_id = m.customer_id AND s.recipient IN (m.sender, l.phone)) AS sender_suppressed,
  l.phone AS linked_phone`;

// instance_lid_links: the lid → phone map the instance-events consumer learns (migration 1700000002000).
const FROM = sql.fragment`inbound_messages m LEFT JOIN instances i ON i.id = m.instance_id AND i.customer_id = m.customer_id
  LEFT JOIN instance_lid_links l ON l.instance_id = m.instance_id AND l.lid = m.sender`;

/** The customer and the filters (not the page). */
function filters(customerId: string, q: InboundQuery): Fragment {
  const parts: Fragment[] = [sql.fragment`m.customer_id = ${customerId}`];
  if (q.q !== '') {
    const pattern = containsPattern(q.q);
    // A number typed as people write it (+1 415 555-0105) also finds the sender by its digits.
    const digits = phoneDigits(q.q);
    const byDigits = digits && digits.length >= 3 ? sql.fragment` OR strpos(m.sender, ${digits}) > 0` : sql.fragment``;
    parts.push(sql.fragment`(m.sender ILIKE ${pattern} OR m.message_text ILIKE ${pattern}${byDigits})`);
  }
  if (q.instance !== '') parts.push(sql.fragment`m.instance_id = ${q.instance}`);
  if (q.chat !== 'all') parts.push(sql.fragment`m.chat = ${q.chat}`);
  if (q.flag !== 'all') parts.push(sql.fragment`m.opt_action = ${q.flag}`);
  if (q.days.fromAt) parts.push(sql.fragment`m.received_at >= ${q.days.fromAt.toISOString()}::timestamptz`);
  if (q.days.toBefore) parts.push(sql.fragment`m.received_at < ${q.days.toBefore.toISOString()}::timestamptz`);
  return sql.join(parts, sql.fragment` AND `);
}

const older = (c: Cursor) => sql.fragment`(m.received_at, m.id) < (${c.at}::timestamptz, ${c.id})`;
const newer = (c: Cursor) => sql.fragment`(m.received_at, m.id) > (${c.at}::timestamptz, ${c.id})`;

const keyOf = (row: InboundRow): Cursor => ({ at: row.at_key, id: row.id });

export interface InboundPage {
  rows: readonly InboundRow[];
  /** Where the newer and older pages start, when there are such pages. */
  newer: Cursor | null;
  older: Cursor | null;
}

/** One page of `size` messages, newest first: the newest, or older than `before`, or newer than `after`. */
export async function inboundPage(db: Queryable, customerId: string, q: InboundQuery, size: number): Promise<InboundPage> {
  const where = filters(customerId, q);
  if (q.after) {
    // Newer than the cursor: the `size` closest to it, read upwards, shown newest first.
    const found = await db.any(sql.type(InboundRow)`
      SELECT ${COLUMNS} FROM ${FROM} WHERE ${where} AND ${newer(q.after)} ORDER BY m.received_at ASC, m.id ASC LIMIT ${size + 1}`);
    const rows = found.slice(0, size).reverse();
    const last = rows[rows.length - 1];
    const hasOlder = last ? await exists(db, sql.fragment`${where} AND ${older(keyOf(last))}`) : false;
    return { rows, newer: found.length > size && rows[0] ? keyOf(rows[0]) : null, older: hasOlder && last ? keyOf(last) : null };
  }
  const found = await db.any(sql.type(InboundRow)`
    SELECT ${COLUMNS} FROM ${FROM} WHERE ${where}${q.before ? sql.fragment` AND ${older(q.before)}` : sql.fragment``} ORDER BY m.received_at DESC, m.id DESC LIMIT ${size + 1}`);
  const rows = found.slice(0, size);
  const first = rows[0];
  const hasNewer = q.before && first ? await exists(db, sql.fragment`${where} AND ${newer(keyOf(first))}`) : false;
  const last = rows[rows.length - 1];
  return { rows, newer: hasNewer && first ? keyOf(first) : null, older: found.length > size && last ? keyOf(last) : null };
}

const Exists = z.object({ found: z.boolean() });

async function exists(db: Queryable, where: Fragment): Promise<boolean> {
  return db.oneFirst(sql.type(Exists)`SELECT EXISTS (SELECT 1 FROM inbound_messages m WHERE ${where}) AS found`);
}

/** One message of the customer's, by id (another customer's is not found, as an unknown one). */
export async function inboundMessage(db: Queryable, customerId: string, id: string): Promise<InboundRow | null> {
  return db.maybeOne(sql.type(InboundRow)`SELECT ${COLUMNS} FROM ${FROM} WHERE m.customer_id = ${customerId} AND m.id = ${id}`);
}

const Instance = z.object({ id: z.string(), name: z.string(), deleted: z.boolean() });

/** The customer's instances, deleted ones too (their messages stay in the log), for the instance filter. */
export async function instancesOf(db: Queryable, customerId: string): Promise<readonly z.infer<typeof Instance>[]> {
  return db.any(sql.type(Instance)`SELECT id, name, (deleted_at IS NOT NULL) AS deleted FROM instances WHERE customer_id = ${customerId} ORDER BY deleted_at IS NOT NULL, name`);
}
