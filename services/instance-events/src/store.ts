import { sql, z, type Queryable } from '@gw/db';

const CallId = z.object({ call_id: z.string() });
const SentMessage = z.object({ message_id: z.string(), message_purpose: z.string() });

/** Connection projection: the newest report wins; a QR keeps the state it was shown in. */
export async function saveConnection(db: Queryable, instanceId: string, change: { state: string | null; qrAvailable: boolean }, at: number): Promise<void> {
  await db.query(sql.typeAlias('void')`
    INSERT INTO instance_connections (instance_id, connection_state, qr_available, updated_at)
    VALUES (${instanceId}, COALESCE(${change.state}, 'connecting'), ${change.qrAvailable}, to_timestamp(${at}::double precision / 1000))
    ON CONFLICT (instance_id) DO UPDATE
      SET connection_state = COALESCE(${change.state}, instance_connections.connection_state),
          qr_available = EXCLUDED.qr_available,
          updated_at = EXCLUDED.updated_at
    WHERE instance_connections.updated_at <= EXCLUDED.updated_at`);
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

/** The gateway's own message behind a provider message id, for message.failed. */
export async function sentMessage(db: Queryable, instanceId: string, providerMessageId: string): Promise<z.infer<typeof SentMessage> | null> {
  return db.maybeOne(sql.type(SentMessage)`
    SELECT d.message_id, p.message_purpose FROM deliveries d JOIN policy_log p ON p.message_id = d.message_id
     WHERE d.instance_id = ${instanceId} AND d.provider_message_id = ${providerMessageId} LIMIT 1`);
}

