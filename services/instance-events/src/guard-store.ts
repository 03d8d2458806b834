import { sql, z, type Queryable } from '@gw/db';

// instance-events' memory of what it told the policy for the number guard (migration
// 1700000002900): each fact once per instance. A row's emitted_by is the source event whose fact
// told it; NULL is a row known but not yet told (the migration's backfill). Each statement both
// records and claims, and returns what the current event must emit: what it told first, and what
// it told before if it is a redelivery of that same event (same fact ids; the policy folds a fact
// id once). The stage consumes one customer's events in order on one partition, so no two
// statements of one instance race.

const FirstConnection = z.object({ first_connected_ms: z.number() });
const Contact = z.object({ contact: z.string() });
const SignalKey = z.object({ signal_key: z.string() });

/** Untold contacts of the backfill told per event at most: a long list drains over a few events. */
export const UNTOLD_CONTACTS_PER_EVENT = 200;

/**
 * Records a first connection (when `connectedAt` is given: an open report) and claims the
 * instance's first-connected time for this event; the time when it must emit InstanceConnected.
 */
export async function claimFirstConnection(db: Queryable, instanceId: string, eventId: string, connectedAt: number | null): Promise<number | null> {
  if (connectedAt !== null) {
    await db.query(sql.typeAlias('void')`
      INSERT INTO instance_first_connections (instance_id, first_connected_at)
      VALUES (${instanceId}, to_timestamp(${connectedAt}::double precision / 1000))
      ON CONFLICT (instance_id) DO NOTHING`);
  }
  return db.maybeOneFirst(sql.type(FirstConnection)`
    UPDATE instance_first_connections SET emitted_by = ${eventId}
     WHERE instance_id = ${instanceId} AND (emitted_by IS NULL OR emitted_by = ${eventId})
    RETURNING (extract(epoch FROM first_connected_at) * 1000)::float8 AS first_connected_ms`);
}

/**
 * Records the people who wrote in this event and claims, for it, those it learned first (and
 * some untold ones of the backfill): the contacts it must emit ContactLearned for.
 */
export async function claimContacts(db: Queryable, instanceId: string, eventId: string, contacts: string[], at: number): Promise<string[]> {
  const fresh = [...new Set(contacts)];
  const learned = fresh.length === 0 ? [] : await db.anyFirst(sql.type(Contact)`
    INSERT INTO instance_known_contacts (instance_id, contact, learned_at, emitted_by)
    SELECT ${instanceId}, contact, to_timestamp(${at}::double precision / 1000), ${eventId}
      FROM unnest(${sql.array(fresh, 'text')}) AS t(contact)
    ON CONFLICT (instance_id, contact) DO NOTHING
    RETURNING contact`);
  // This event's own earlier claims first (a redelivery), then untold ones, up to the cap.
  const claimed = await db.anyFirst(sql.type(Contact)`
    UPDATE instance_known_contacts SET emitted_by = ${eventId}
     WHERE instance_id = ${instanceId} AND contact IN (
       SELECT contact FROM (
         SELECT contact, 0 AS rank FROM instance_known_contacts WHERE instance_id = ${instanceId} AND emitted_by = ${eventId}
         UNION ALL
         SELECT contact, 1 AS rank FROM instance_known_contacts WHERE instance_id = ${instanceId} AND emitted_by IS NULL) untold
        ORDER BY rank, contact LIMIT ${UNTOLD_CONTACTS_PER_EVENT + fresh.length})
    RETURNING contact`);
  return [...new Set([...learned, ...claimed])].sort();
}

/** Records restriction signals by key; the keys this event must emit (its first, or its own earlier ones). */
export async function claimSignals(db: Queryable, instanceId: string, eventId: string, keys: string[]): Promise<Set<string>> {
  if (keys.length === 0) return new Set();
  const unique = [...new Set(keys)];
  const rows = await db.anyFirst(sql.type(SignalKey)`
    WITH fresh AS (
      INSERT INTO instance_restriction_signals (instance_id, signal_key, emitted_by)
      SELECT ${instanceId}, signal_key, ${eventId} FROM unnest(${sql.array(unique, 'text')}) AS t(signal_key)
      ON CONFLICT (instance_id, signal_key) DO NOTHING
      RETURNING signal_key)
    SELECT signal_key FROM fresh
    UNION
    SELECT signal_key FROM instance_restriction_signals
     WHERE instance_id = ${instanceId} AND signal_key = ANY(${sql.array(unique, 'text')}) AND emitted_by = ${eventId}`);
  return new Set(rows);
}
