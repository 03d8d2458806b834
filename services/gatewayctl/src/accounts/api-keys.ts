import type { Pool } from '@gw/db';
import { generateApiKey } from '@gw/security';
import { CliError, requireCustomer } from './customers.ts';

/** Creates a key and returns it once; only its hash is stored. */
export async function createApiKey(pool: Pool, customerId: string, name: string) {
  await requireCustomer(pool, customerId);
  const key = generateApiKey();
  await pool.query('INSERT INTO api_keys (id, customer_id, name, secret_hash) VALUES ($1, $2, $3, $4)', [key.keyId, customerId, name, key.secretHash]);
  return { key_id: key.keyId, customer_id: customerId, name, api_key: key.token };
}

export async function revokeApiKey(pool: Pool, keyId: string) {
  const result = await pool.query<{ revoked_at: Date }>(
    'UPDATE api_keys SET revoked_at = COALESCE(revoked_at, now()) WHERE id = $1 RETURNING revoked_at',
    [keyId],
  );
  if (result.rowCount === 0) throw new CliError(`No API key ${keyId}.`);
  return { key_id: keyId, revoked_at: result.rows[0]!.revoked_at.toISOString() };
}

export async function listApiKeys(pool: Pool, customerId: string) {
  const result = await pool.query<{ id: string; name: string; created_at: Date; revoked_at: Date | null }>(
    'SELECT id, name, created_at, revoked_at FROM api_keys WHERE customer_id = $1 ORDER BY created_at',
    [customerId],
  );
  return result.rows.map((r) => ({ key_id: r.id, name: r.name, created_at: r.created_at.toISOString(), revoked_at: r.revoked_at?.toISOString() ?? null }));
}
