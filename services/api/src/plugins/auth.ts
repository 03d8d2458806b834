import type { FastifyReply, FastifyRequest } from 'fastify';
import { BatchedLookup } from '@gw/batching';
import { ApiError } from '@gw/contract';
import type { Pool } from '@gw/db';
import { parseApiKey, secretMatches } from '@gw/security';

export interface Caller {
  customerId: string;
  apiKeyId: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    caller?: Caller;
  }
}

interface KeyRow {
  customer_id: string;
  secret_hash: Buffer;
  revoked_at: Date | null;
}

const INVALID = () =>
  new ApiError('invalid_api_key', 'A valid API key is required: send it as "Authorization: Bearer <API_KEY>".', {
    header: 'Authorization',
    scheme: 'Bearer',
  });

/**
 * Bearer API-key authentication. Unknown, malformed and wrong keys get the same answer; the
 * secret is compared in constant time against a stored SHA-256 hash.
 */
export function authenticate(pool: Pool) {
  // Concurrent requests share one query; nothing is cached, so a revoked key is refused at once.
  const keys = new BatchedLookup<string, KeyRow>(async (ids) => {
    const result = await pool.query<KeyRow & { id: string }>('SELECT id, customer_id, secret_hash, revoked_at FROM api_keys WHERE id = ANY($1::text[])', [ids]);
    return new Map(result.rows.map((row) => [row.id, row]));
  });
  return async (request: FastifyRequest, _reply: FastifyReply) => {
    const header = request.headers.authorization;
    const match = typeof header === 'string' ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
    const parsed = match ? parseApiKey(match[1]!) : null;
    if (!parsed) throw INVALID();
    const row = await keys.get(parsed.keyId);
    if (!secretMatches(parsed.secret, row?.secret_hash ?? null)) throw INVALID();
    if (row!.revoked_at) {
      throw new ApiError('revoked_api_key', 'This API key has been revoked. Create a new key in the dashboard.', { key_id: parsed.keyId });
    }
    request.caller = { customerId: row!.customer_id, apiKeyId: parsed.keyId };
  };
}
