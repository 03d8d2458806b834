import type { FastifyReply, FastifyRequest } from 'fastify';
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
  return async (request: FastifyRequest, _reply: FastifyReply) => {
    const header = request.headers.authorization;
    const match = typeof header === 'string' ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
    const parsed = match ? parseApiKey(match[1]!) : null;
    if (!parsed) throw INVALID();
    const result = await pool.query<{ customer_id: string; secret_hash: Buffer; revoked_at: Date | null }>(
      'SELECT customer_id, secret_hash, revoked_at FROM api_keys WHERE id = $1',
      [parsed.keyId],
    );
    const row = result.rows[0];
    if (!secretMatches(parsed.secret, row?.secret_hash ?? null)) throw INVALID();
    if (row!.revoked_at) {
      throw new ApiError('revoked_api_key', 'This API key has been revoked. Create a new key in the dashboard.', { key_id: parsed.keyId });
    }
    request.caller = { customerId: row!.customer_id, apiKeyId: parsed.keyId };
  };
}
