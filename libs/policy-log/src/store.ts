import type { PoolClient } from '@gw/db';
import type { SendDecided } from '@gw/events';

/** The policy log keeps a digest of the body, never the body: this is the copy stored in Postgres. */
export function storedCopy(event: SendDecided): SendDecided {
  return { ...event, dispatch: event.dispatch ? { ...event.dispatch, text: null as unknown as string } : null };
}

/**
 * Inserts policy-log entries into the Postgres projection; an entry already there (same log_id
 * or command) is left as it is. Used by the policy consumer and by the projection rebuild.
 */
export async function insertEntries(client: PoolClient, entries: SendDecided[]): Promise<number> {
  if (entries.length === 0) return 0;
  // Postgres takes at most 65,535 parameters per statement (19 per row).
  if (entries.length > 1000) {
    let inserted = 0;
    for (let i = 0; i < entries.length; i += 1000) inserted += await insertEntries(client, entries.slice(i, i + 1000));
    return inserted;
  }
  const values: unknown[] = [];
  const rows = entries.map((e, i) => {
    values.push(
      e.log_id, e.correlation_id, e.event_id, e.customer_id, e.instance_id, e.message_id, e.recipient, e.message_purpose, e.message_digest,
      e.decision, e.error_code ?? null, e.error_message ?? null, JSON.stringify(e.reasons), e.policy_version, e.occurred_at,
      // As the consumer stores it: the whole event without the message body.
      JSON.stringify(storedCopy(e)), e.partition_chain, e.prev_hash, e.entry_hash,
    );
    const p = (n: number) => `$${i * 19 + n}`;
    return `(${p(1)},${p(2)},${p(3)},${p(4)},${p(5)},${p(6)},${p(7)},${p(8)},${p(9)},${p(10)},${p(11)},${p(12)},${p(13)},${p(14)},to_timestamp(${p(15)} / 1000.0),${p(16)},${p(17)},${p(18)},${p(19)})`;
  });
  const result = await client.query(
    `INSERT INTO policy_log (log_id, command_id, event_id, customer_id, instance_id, message_id, recipient,
       message_purpose, message_digest, decision, error_code, error_message, reasons, policy_version,
       decided_at, decision_event, partition_chain, prev_hash, entry_hash)
     VALUES ${rows.join(',')} ON CONFLICT DO NOTHING`,
    values,
  );
  return result.rowCount ?? 0;
}
