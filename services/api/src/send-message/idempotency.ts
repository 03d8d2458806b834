import { createHash } from 'node:crypto';
import { ApiError } from '@gw/contract';
import type { Pool } from '@gw/db';

export const IDEMPOTENCY_KEY_PATTERN = '^[\\x21-\\x7E]{1,255}$';

export type IdempotencyClaim =
  | { kind: 'new' }
  | { kind: 'replay'; commandId: string; messageId: string; ageMs: number };

export function requestHash(body: unknown): string {
  return createHash('sha256').update(JSON.stringify(body)).digest('hex');
}

/**
 * Claims an Idempotency-Key for a new command, or finds the command that already holds it.
 * The same key with a different request is refused rather than silently answered.
 */
export async function claimIdempotencyKey(
  pool: Pool,
  customerId: string,
  key: string,
  hash: string,
  ids: { commandId: string; messageId: string },
): Promise<IdempotencyClaim> {
  const inserted = await pool.query(
    `INSERT INTO idempotency_records (customer_id, idempotency_key, request_hash, command_id, message_id)
     VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING`,
    [customerId, key, hash, ids.commandId, ids.messageId],
  );
  if (inserted.rowCount === 1) return { kind: 'new' };
  const existing = await pool.query<{ request_hash: string; command_id: string; message_id: string; age_ms: number }>(
    `SELECT request_hash, command_id, message_id, (extract(epoch FROM now() - created_at) * 1000)::float8 AS age_ms
       FROM idempotency_records WHERE customer_id = $1 AND idempotency_key = $2`,
    [customerId, key],
  );
  const row = existing.rows[0]!;
  if (row.request_hash !== hash) {
    throw new ApiError('validation_error', 'This Idempotency-Key was already used with a different request.', {
      field: 'Idempotency-Key',
      rule: 'reused_with_different_request',
    });
  }
  return { kind: 'replay', commandId: row.command_id, messageId: row.message_id, ageMs: Number(row.age_ms) };
}
