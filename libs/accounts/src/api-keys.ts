import { sql, z, type Queryable } from '@gw/db';
import { generateApiKey } from '@gw/security';
import { requireCustomer } from './customers.ts';
import { AccountError } from './errors.ts';

const Revoked = z.object({ revoked_at: z.date() });
const ApiKeyRow = z.object({ id: z.string(), name: z.string(), created_at: z.date(), revoked_at: z.date().nullable(), last_used_at: z.date().nullable() });

/** Creates a key and returns it once; only its hash is stored. */
export async function createApiKey(pool: Queryable, customerId: string, name: string) {
  await requireCustomer(pool, customerId);
  const key = generateApiKey();
  await pool.query(sql.typeAlias('void')`
    INSERT INTO api_keys (id, customer_id, name, secret_hash) VALUES (${key.keyId}, ${customerId}, ${name}, ${sql.binary(key.secretHash)})`);
  return { key_id: key.keyId, customer_id: customerId, name, api_key: key.token };
}

/**
 * Revokes a key (revoking it again keeps the first time). With `customerId`, only that
 * customer's own key: another customer's key is refused exactly as a key that does not exist.
 */
export async function revokeApiKey(pool: Queryable, keyId: string, scope: { customerId?: string } = {}) {
  const ownedBy = scope.customerId === undefined ? sql.fragment`TRUE` : sql.fragment`customer_id = ${scope.customerId}`;
  const revokedAt = await pool.maybeOneFirst(sql.type(Revoked)`
    UPDATE api_keys SET revoked_at = COALESCE(revoked_at, now()) WHERE id = ${keyId} AND ${ownedBy} RETURNING revoked_at`);
  if (revokedAt === null) throw new AccountError('not_found', `No API key ${keyId}.`);
  return { key_id: keyId, revoked_at: revokedAt.toISOString() };
}

/** The customer's keys, oldest first, revoked ones included; never a secret or its hash. */
export async function listApiKeys(pool: Queryable, customerId: string) {
  const rows = await pool.any(sql.type(ApiKeyRow)`
    SELECT id, name, created_at, revoked_at, last_used_at FROM api_keys WHERE customer_id = ${customerId} ORDER BY created_at, id`);
  return rows.map((r) => ({
    key_id: r.id,
    name: r.name,
    created_at: r.created_at.toISOString(),
    revoked_at: r.revoked_at?.toISOString() ?? null,
    /** When the key last authenticated a request, to the minute (recordApiKeyUse); null if never. */
    last_used_at: r.last_used_at?.toISOString() ?? null,
  }));
}

/** How often, at most, a key's last_used_at is written. */
export const API_KEY_USE_PRECISION_MS = 60_000;

/**
 * Records that a key authenticated a request: sets last_used_at unless it was set less than a
 * minute ago, so a busy key costs one write a minute, not one per request. True when it wrote.
 */
export async function recordApiKeyUse(pool: Queryable, keyId: string): Promise<boolean> {
  const updated = await pool.query(sql.typeAlias('void')`
    UPDATE api_keys SET last_used_at = now()
     WHERE id = ${keyId} AND (last_used_at IS NULL OR last_used_at < now() - make_interval(secs => ${API_KEY_USE_PRECISION_MS / 1000}))`);
  return updated.rowCount === 1;
}
