import type { FastifyReply, FastifyRequest } from 'fastify';
import { API_KEY_USE_PRECISION_MS, recordApiKeyUse } from '@gw/accounts';
import { BatchedLookup } from '@gw/batching';
import { ApiError } from '@gw/contract';
import { sql, z, type Queryable } from '@gw/db';
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

const KeyRow = z.object({ id: z.string(), customer_id: z.string(), secret_hash: z.instanceof(Buffer), revoked_at: z.date().nullable() });
type KeyRow = z.infer<typeof KeyRow>;

const INVALID = () =>
  new ApiError('invalid_api_key', 'A valid API key is required: send it as "Authorization: Bearer <API_KEY>".', {
    header: 'Authorization',
    scheme: 'Bearer',
  });

/** Keys whose use this process recorded lately, so a busy key is not written (or even asked) on every request. */
const RECENT_USES_LIMIT = 10_000;

/**
 * Notes that a key authenticated a request (its last_used_at, shown in the dashboard): at most
 * once a minute per key, in the background. It never delays or fails the request: a failure is
 * logged (the key id and the error's kind, never the key, its secret or the error's text) and the
 * next request a minute on tries again.
 */
export function keyUseRecorder(pool: Queryable, clock: () => number = Date.now) {
  const recorded = new Map<string, number>();
  return (keyId: string, log: Pick<FastifyRequest['log'], 'warn'>): void => {
    const now = clock();
    const last = recorded.get(keyId);
    if (last !== undefined && now - last < API_KEY_USE_PRECISION_MS) return;
    if (recorded.size >= RECENT_USES_LIMIT) recorded.clear();
    recorded.set(keyId, now);
    recordApiKeyUse(pool, keyId).catch((error: unknown) => {
      recorded.delete(keyId);
      const err = error instanceof Error ? { type: error.name, code: (error as { code?: unknown }).code ?? null } : { type: typeof error };
      log.warn({ key_id: keyId, err }, 'could not record the API key use');
    });
  };
}

/**
 * Bearer API-key authentication. Unknown, malformed and wrong keys get the same answer; the
 * secret is compared in constant time against a stored SHA-256 hash. A key that authenticates has
 * its use recorded (keyUseRecorder).
 */
export function authenticate(pool: Queryable) {
  const recordUse = keyUseRecorder(pool);
  // Concurrent requests share one query; nothing is cached, so a revoked key is refused at once.
  const keys = new BatchedLookup<string, KeyRow>(async (ids) => {
    const rows = await pool.any(sql.type(KeyRow)`
      SELECT id, customer_id, secret_hash, revoked_at FROM api_keys WHERE id = ANY(${sql.array(ids, 'text')})`);
    return new Map(rows.map((row) => [row.id, row]));
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
    recordUse(parsed.keyId, request.log);
  };
}
