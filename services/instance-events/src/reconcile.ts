import type { Pool, PoolClient } from '@gw/db';
import { withTransaction } from '@gw/db';
import { derivedEventId, type DeliveryFailed, type MessageDispatched } from '@gw/events';
import { messageDigest } from '@gw/policy';
import type { Runtime } from '@gw/runtime';
import { phoneFromJid } from './map-event.ts';

/** Records a send the manager reports (send.message), for reconciling ambiguous sends. */
export async function recordManagerSend(pool: Pool, instanceId: string, data: unknown): Promise<void> {
  const send = data as { key?: { id?: unknown; remoteJid?: unknown; fromMe?: unknown }; message?: { conversation?: unknown } } | null;
  const id = send?.key?.id;
  const recipient = phoneFromJid(typeof send?.key?.remoteJid === 'string' ? send.key.remoteJid : undefined);
  const text = send?.message?.conversation;
  if (typeof id !== 'string' || !recipient || typeof text !== 'string' || send?.key?.fromMe === false) return;
  await pool.query(
    `INSERT INTO manager_sends (instance_id, provider_message_id, recipient, message_digest) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING`,
    [instanceId, id, recipient, messageDigest(text)],
  );
}

const derivedId = (messageId: string, kind: string) => derivedEventId(messageId, kind);

interface Row {
  message_id: string;
  command_id: string;
  customer_id: string;
  instance_id: string;
  log_id: number;
  provider_message_id: string | null;
}

/**
 * Resolves sends of unknown outcome (the manager's answer was lost) from what the manager
 * reported it sent: a match (same instance, recipient and body digest) is dispatched; one still
 * unmatched after the ack deadline is failed (no ack). Each resolution is appended to
 * delivery-events, where it becomes message.sent or message.failed, and wakes a waiting request.
 */
export async function reconcileUnknownSends(runtime: Runtime, ackDeadlineMs: number, now = Date.now()): Promise<{ dispatched: number; failed: number }> {
  const { pool, codec, kafka, topics } = runtime;
  return withTransaction(pool, async (client: PoolClient) => {
    const dispatched = await client.query<Row>(
      `WITH matched AS (
         SELECT DISTINCT ON (d.message_id) d.message_id, s.provider_message_id
           FROM deliveries d
           JOIN policy_log p ON p.command_id = d.command_id
           JOIN manager_sends s ON s.instance_id = d.instance_id AND s.recipient = p.recipient AND s.message_digest = p.message_digest
          WHERE d.state = 'unknown'
            AND NOT EXISTS (SELECT 1 FROM deliveries x WHERE x.instance_id = d.instance_id AND x.provider_message_id = s.provider_message_id)
          ORDER BY d.message_id, s.seen_at)
       UPDATE deliveries d SET state = 'dispatched', provider_message_id = m.provider_message_id, failure_detail = NULL, updated_at = now()
         FROM matched m WHERE d.message_id = m.message_id AND d.state = 'unknown'
       RETURNING d.message_id, d.command_id, d.customer_id, d.instance_id, d.log_id, d.provider_message_id`,
    );
    const failed = await client.query<Row>(
      `UPDATE deliveries SET state = 'failed', failure_reason = 'no_ack', failure_detail = 'no acknowledgement from the manager within the deadline', updated_at = now()
        WHERE state = 'unknown' AND updated_at < now() - make_interval(secs => $1)
       RETURNING message_id, command_id, customer_id, instance_id, log_id, provider_message_id`,
      [ackDeadlineMs / 1000],
    );
    const base = (row: Row, kind: string) => ({
      event_id: derivedId(row.message_id, kind),
      correlation_id: row.command_id,
      occurred_at: now,
      customer_id: row.customer_id,
      instance_id: row.instance_id,
      message_id: row.message_id,
      log_id: Number(row.log_id),
    });
    const events = [
      ...dispatched.rows.map((row) => ({ type: 'MessageDispatched' as const, payload: { ...base(row, 'reconciled'), provider_message_id: row.provider_message_id!, provider_status: 'SERVER_ACK' } satisfies MessageDispatched })),
      ...failed.rows.map((row) => ({ type: 'DeliveryFailed' as const, payload: { ...base(row, 'no-ack'), reason: 'no_ack', detail: 'no acknowledgement from the manager within the deadline', definitive: false } satisfies DeliveryFailed })),
    ];
    for (const event of events) {
      await client.query('UPDATE deliveries SET outcome_event = $2 WHERE message_id = $1', [event.payload.message_id, JSON.stringify(event)]);
    }
    // Appended before the commit: if the append fails nothing changed; a commit lost after it
    // re-appends the same events (same ids) on the next round.
    if (events.length > 0) {
      await kafka.send(await Promise.all(events.map((e) => (e.type === 'MessageDispatched' ? codec.encode('MessageDispatched', e.payload) : codec.encode('DeliveryFailed', e.payload)))));
      runtime.logger.info({ dispatched: dispatched.rowCount, failed: failed.rowCount, topic: topics.name('deliveryEvents') }, 'sends of unknown outcome reconciled');
    }
    return { dispatched: dispatched.rowCount ?? 0, failed: failed.rowCount ?? 0 };
  });
}
