import { createHash } from 'node:crypto';
import { ApiError } from '@gw/contract';
import { sql, z, type Queryable } from '@gw/db';

export const IDEMPOTENCY_KEY_PATTERN = '^[\\x21-\\x7E]{1,255}$';

export type IdempotencyClaim =
  | { kind: 'new' }
  | { kind: 'replay'; commandId: string; messageId: string; ageMs: number };

export function requestHash(body: unknown): string {
  return createHash('sha256').update(JSON.stringify(body)).digest('hex');
}

const HeldKey = z.object({ request_hash: z.string(), command_id: z.string(), message_id: z.string(), age_ms: z.number() });

/**
 * Claims an Idempotency-Key for a new command, or finds the command that already holds it.
 * The same key with a different request is refused rather than silently answered.
 */
export async function claimIdempotencyKey(
  pool: Queryable,
  customerId: string,
  key: string,
  hash: string,
  ids: { commandId: string; messageId: string },
): Promise<IdempotencyClaim> {
  const inserted = await pool.query(sql.typeAlias('void')`
    INSERT INTO idempotency_records (customer_id, idempotency_key, request_hash, command_id, message_id)
    VALUES (${customerId}, ${key}, ${hash}, ${ids.commandId}, ${ids.messageId}) ON CONFLICT DO NOTHING`);
  if (inserted.rowCount === 1) return { kind: 'new' };
  const row = await pool.one(sql.type(HeldKey)`
    SELECT request_hash, command_id, message_id, (extract(epoch FROM now() - created_at) * 1000)::float8 AS age_ms
      FROM idempotency_records WHERE customer_id = ${customerId} AND idempotency_key = ${key}`);
  if (row.request_hash !== hash) {
    throw new ApiError('validation_error', 'This Idempotency-Key was already used with a different request.', {
      field: 'Idempotency-Key',
      rule: 'reused_with_different_request',
    });
  }
  return { kind: 'replay', commandId: row.command_id, messageId: row.message_id, ageMs: row.age_ms };
}
