// What /suppressed-recipients reads, always within one customer: the current suppressions (the
// `suppressions` projection) with the cause of each opt-out (its newest `suppression_history`
// 'suppressed' row, and the inbound message and instance it names), and the history. Both written
// by the policy consumer from the RecipientSuppressed / RecipientUnsuppressed facts. A recipient
// may be a linked id (`<digits>@lid`, a sender whose number WhatsApp hid); once the engine learns
// the number it suppresses that too, and the history row says where from (`linked_from`).
import { sql, z, type Queryable } from '@gw/db';
import type { SuppressionQuery } from './query.ts';

type Fragment = ReturnType<typeof sql.fragment> | ReturnType<typeof sql.join>;

/** Where the current set and the history meet the filters (source, phone digits, days). */
function filters(alias: 'cur' | 'h', time: 'created_at' | 'at', customerId: string, q: Pick<SuppressionQuery, 'source' | 'phone' | 'days'>): Fragment {
  const col = (name: string) => sql.identifier([alias, name]);
  const parts: Fragment[] = [sql.fragment`${col('customer_id')} = ${customerId}`];
  if (q.source !== 'all') parts.push(sql.fragment`${col('source')} = ${q.source}`);
  // Digits only (parseSuppressionQuery): no pattern to escape.
  if (q.phone !== '') parts.push(sql.fragment`strpos(${col('recipient')}, ${q.phone}) > 0`);
  if (q.days.fromAt) parts.push(sql.fragment`${col(time)} >= ${q.days.fromAt.toISOString()}::timestamptz`);
  if (q.days.toBefore) parts.push(sql.fragment`${col(time)} < ${q.days.toBefore.toISOString()}::timestamptz`);
  return sql.join(parts, sql.fragment` AND `);
}

const Count = z.object({ n: z.number() });

export const CurrentRow = z.object({
  recipient: z.string(),
  source: z.string(),
  reason: z.string(),
  created_by: z.string(),
  created_at: z.date(),
  /** created_at to the microsecond, for keyset batches. */
  since_key: z.string(),
  cause_instance_id: z.string().nullable(),
  cause_inbound_id: z.string().nullable(),
  cause_text: z.string().nullable(),
  cause_received_at: z.date().nullable(),
  instance_name: z.string().nullable(),
  instance_deleted: z.boolean().nullable(),
  /** For a number: the linked id its opt-out was carried over from (null: its own). */
  cause_linked_from: z.string().nullable(),
  /** For a linked id: the number it turned out to be (null: not known yet). */
  linked_number: z.string().nullable(),
});
export type CurrentRow = z.infer<typeof CurrentRow>;

/** Where a batch of the current set starts: after this row (keyset), or at an offset (pages). */
export type CurrentSlice = { limit: number; offset: number } | { limit: number; after: { sinceKey: string; recipient: string; source: string } | null };

/**
 * The current suppressions matching the filters, newest first, each opt-out with its cause. The
 * causes are looked up for this batch's recipients only, so a batch costs the same on page 1 and
 * on page 200 of an export.
 */
export async function currentSuppressions(db: Queryable, customerId: string, q: Pick<SuppressionQuery, 'source' | 'phone' | 'days'>, slice: CurrentSlice): Promise<readonly CurrentRow[]> {
  const keyset = 'after' in slice && slice.after ? sql.fragment` AND (cur.created_at, cur.recipient, cur.source) < (${slice.after.sinceKey}::timestamptz, ${slice.after.recipient}, ${slice.after.source})` : sql.fragment``;
  const offset = 'offset' in slice ? slice.offset : 0;
  return db.any(sql.type(CurrentRow)`
    WITH batch AS (
      SELECT cur.recipient, cur.source, cur.reason, cur.created_by, cur.created_at
        FROM suppressions cur
       WHERE ${filters('cur', 'created_at', customerId, q)}${keyset}
       ORDER BY cur.created_at DESC, cur.recipient DESC, cur.source DESC
       LIMIT ${slice.limit} OFFSET ${offset}
    ), cause AS (
      SELECT DISTINCT ON (h.recipient) h.recipient, h.instance_id, h.inbound_message_id, h.linked_from
        FROM suppression_history h
       WHERE h.customer_id = ${customerId} AND h.source = 'opt_out' AND h.action = 'suppressed'
         AND h.recipient IN (SELECT recipient FROM batch WHERE source = 'opt_out')
       ORDER BY h.recipient, h.at DESC, h.id DESC
    ), linked AS (
      SELECT DISTINCT ON (h.linked_from, h.source) h.linked_from AS lid, h.source, h.recipient AS phone
        FROM suppression_history h
       WHERE h.customer_id = ${customerId} AND h.action = 'suppressed'
         AND h.linked_from IN (SELECT recipient FROM batch WHERE recipient LIKE '%@lid')
       ORDER BY h.linked_from, h.source, h.at DESC, h.id DESC
    )
    SELECT b.recipient, b.source, b.reason, b.created_by, b.created_at,
           to_char(b.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS since_key,
           c.instance_id AS cause_instance_id, c.inbound_message_id AS cause_inbound_id,
           m.message_text AS cause_text, m.received_at AS cause_received_at,
           i.name AS instance_name, (i.deleted_at IS NOT NULL) AS instance_deleted,
           c.linked_from AS cause_linked_from, l.phone AS linked_number
      FROM batch b
      LEFT JOIN cause c ON b.source = 'opt_out' AND c.recipient = b.recipient
      LEFT JOIN linked l ON l.lid = b.recipient AND l.source = b.source
      LEFT JOIN inbound_messages m ON m.id = c.inbound_message_id AND m.customer_id = ${customerId}
      LEFT JOIN instances i ON i.id = c.instance_id AND i.customer_id = ${customerId}
     ORDER BY b.created_at DESC, b.recipient DESC, b.source DESC`);
}

export async function countCurrent(db: Queryable, customerId: string, q: Pick<SuppressionQuery, 'source' | 'phone' | 'days'>): Promise<number> {
  return db.oneFirst(sql.type(Count)`SELECT count(*) AS n FROM suppressions cur WHERE ${filters('cur', 'created_at', customerId, q)}`);
}

export const HistoryRow = z.object({
  id: z.number(),
  recipient: z.string(),
  action: z.string(),
  source: z.string(),
  reason: z.string(),
  created_by: z.string(),
  at: z.date(),
  instance_id: z.string().nullable(),
  inbound_message_id: z.string().nullable(),
  instance_name: z.string().nullable(),
  instance_deleted: z.boolean().nullable(),
  /** Whether the inbound message it names is still in the inbound log (not purged). */
  message_kept: z.boolean(),
  /** Set when the engine carried this change over from a linked id (or the number) of the same person. */
  linked_from: z.string().nullable(),
});
export type HistoryRow = z.infer<typeof HistoryRow>;

/** The history matching the filters, newest first. */
export async function suppressionHistory(db: Queryable, customerId: string, q: Pick<SuppressionQuery, 'source' | 'phone' | 'days'>, slice: { limit: number; offset: number }): Promise<readonly HistoryRow[]> {
  return db.any(sql.type(HistoryRow)`
    SELECT h.id, h.recipient, h.action, h.source, h.reason, h.created_by, h.at, h.instance_id, h.inbound_message_id, h.linked_from,
           i.name AS instance_name, (i.deleted_at IS NOT NULL) AS instance_deleted, (m.id IS NOT NULL) AS message_kept
      FROM suppression_history h
      LEFT JOIN instances i ON i.id = h.instance_id AND i.customer_id = h.customer_id
      LEFT JOIN inbound_messages m ON m.id = h.inbound_message_id AND m.customer_id = h.customer_id
     WHERE ${filters('h', 'at', customerId, q)}
     ORDER BY h.at DESC, h.id DESC
     LIMIT ${slice.limit} OFFSET ${slice.offset}`);
}

export async function countHistory(db: Queryable, customerId: string, q: Pick<SuppressionQuery, 'source' | 'phone' | 'days'>): Promise<number> {
  return db.oneFirst(sql.type(Count)`SELECT count(*) AS n FROM suppression_history h WHERE ${filters('h', 'at', customerId, q)}`);
}

const Held = z.object({ source: z.string(), created_at: z.date() });

/** The current suppressions of one recipient (at most one per source). */
export async function suppressionsOf(db: Queryable, customerId: string, recipient: string): Promise<readonly z.infer<typeof Held>[]> {
  return db.any(sql.type(Held)`SELECT source, created_at FROM suppressions WHERE customer_id = ${customerId} AND recipient = ${recipient}`);
}
