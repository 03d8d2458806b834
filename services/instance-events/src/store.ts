import type { Pool } from '@gw/db';

/** Connection projection: the newest report wins; a QR keeps the state it was shown in. */
export async function saveConnection(pool: Pool, instanceId: string, change: { state: string | null; qrAvailable: boolean }, at: number): Promise<void> {
  await pool.query(
    `INSERT INTO instance_connections (instance_id, connection_state, qr_available, updated_at)
     VALUES ($1, COALESCE($2, 'connecting'), $3, to_timestamp($4::double precision / 1000))
     ON CONFLICT (instance_id) DO UPDATE
       SET connection_state = COALESCE($2, instance_connections.connection_state),
           qr_available = EXCLUDED.qr_available,
           updated_at = EXCLUDED.updated_at
     WHERE instance_connections.updated_at <= EXCLUDED.updated_at`,
    [instanceId, change.state, change.qrAvailable, at],
  );
}

/** The ids, among the calls of this event, already known to have been accepted. */
export async function acceptedCalls(pool: Pool, instanceId: string, data: unknown): Promise<Set<string>> {
  const ids = (Array.isArray(data) ? data : [data])
    .map((call) => (typeof call === 'object' && call !== null ? (call as { id?: unknown }).id : undefined))
    .filter((id): id is string => typeof id === 'string');
  if (ids.length === 0) return new Set();
  const { rows } = await pool.query<{ call_id: string }>('SELECT call_id FROM instance_calls WHERE instance_id = $1 AND call_id = ANY($2) AND accepted', [instanceId, ids]);
  return new Set(rows.map((row) => row.call_id));
}

export async function recordCalls(pool: Pool, instanceId: string, calls: Array<{ id: string; status: string }>): Promise<void> {
  for (const call of calls) {
    await pool.query(
      `INSERT INTO instance_calls (instance_id, call_id, accepted) VALUES ($1, $2, $3)
       ON CONFLICT (instance_id, call_id) DO UPDATE SET accepted = instance_calls.accepted OR EXCLUDED.accepted, updated_at = now()`,
      [instanceId, call.id, call.status === 'accept'],
    );
  }
}

/** The gateway's own message behind a provider message id, for message.failed. */
export async function sentMessage(pool: Pool, instanceId: string, providerMessageId: string): Promise<{ message_id: string; message_purpose: string } | null> {
  const { rows } = await pool.query<{ message_id: string; message_purpose: string }>(
    `SELECT d.message_id, p.message_purpose FROM deliveries d JOIN policy_log p ON p.message_id = d.message_id
     WHERE d.instance_id = $1 AND d.provider_message_id = $2 LIMIT 1`,
    [instanceId, providerMessageId],
  );
  return rows[0] ?? null;
}
