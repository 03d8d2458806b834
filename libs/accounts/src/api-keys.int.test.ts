import { describe, expect, it } from 'vitest';
import { sql } from '@gw/db';
import { useIsolatedDatabase } from '../../../test/support/isolated-database.ts';
import { createApiKey, listApiKeys, recordApiKeyUse, revokeApiKey } from './api-keys.ts';
import { AccountError } from './errors.ts';
import { customerRow } from './testing.ts';

// A customer revokes only its own keys; the operator revokes any.
const db = useIsolatedDatabase();

const revokedAt = async (customerId: string, keyId: string) => (await listApiKeys(db.pool, customerId)).find((k) => k.key_id === keyId)?.revoked_at;

describe('revokeApiKey', () => {
  it("with a customer, revokes that customer's own key", async () => {
    const acme = await customerRow(db.pool, 'Acme');
    const key = await createApiKey(db.pool, acme, 'ci');
    const revoked = await revokeApiKey(db.pool, key.key_id, { customerId: acme });
    expect(revoked).toEqual({ key_id: key.key_id, revoked_at: expect.any(String) });
    expect(await revokedAt(acme, key.key_id)).toBe(revoked.revoked_at);
    // Again: the first revocation's time stays.
    expect(await revokeApiKey(db.pool, key.key_id, { customerId: acme })).toEqual(revoked);
  });

  it("refuses another customer's key as not found, and leaves it working", async () => {
    const acme = await customerRow(db.pool, 'Acme');
    const other = await customerRow(db.pool, 'Other');
    const key = await createApiKey(db.pool, acme, 'ci');
    const refused = revokeApiKey(db.pool, key.key_id, { customerId: other });
    await expect(refused).rejects.toBeInstanceOf(AccountError);
    await expect(refused).rejects.toMatchObject({ code: 'not_found', message: `No API key ${key.key_id}.` });
    expect(await revokedAt(acme, key.key_id)).toBeNull();
    // The same answer as for a key that does not exist: nothing tells the two apart.
    await expect(revokeApiKey(db.pool, 'nokey', { customerId: other })).rejects.toMatchObject({ code: 'not_found', message: 'No API key nokey.' });
  });

  it('without a customer (the operator), revokes any key; an unknown key is not found', async () => {
    const acme = await customerRow(db.pool, 'Acme');
    const key = await createApiKey(db.pool, acme, 'ci');
    const revoked = await revokeApiKey(db.pool, key.key_id);
    expect(await revokedAt(acme, key.key_id)).toBe(revoked.revoked_at);
    await expect(revokeApiKey(db.pool, 'nokey')).rejects.toEqual(new AccountError('not_found', 'No API key nokey.'));
  });
});

describe('createApiKey', () => {
  it('returns the key once and stores only its hash; an unknown customer is not found', async () => {
    const acme = await customerRow(db.pool, 'Acme');
    const key = await createApiKey(db.pool, acme, 'ci');
    expect(key.api_key).toMatch(/^gw_[0-9a-f]{16}_/);
    expect(JSON.stringify(await listApiKeys(db.pool, acme))).not.toContain(key.api_key.slice(20));
    await expect(createApiKey(db.pool, 'cus_nope', 'ci')).rejects.toEqual(new AccountError('not_found', 'No customer cus_nope.'));
  });
});

describe('listApiKeys', () => {
  it("lists the customer's keys, oldest first, revoked ones included, with when each was last used and no secret", async () => {
    const acme = await customerRow(db.pool, 'Acme');
    const other = await customerRow(db.pool, 'Other');
    const ci = await createApiKey(db.pool, acme, 'ci');
    const crm = await createApiKey(db.pool, acme, 'crm');
    await createApiKey(db.pool, other, 'theirs');
    await revokeApiKey(db.pool, crm.key_id, { customerId: acme });
    const listed = await listApiKeys(db.pool, acme);
    expect(listed).toEqual([
      { key_id: ci.key_id, name: 'ci', created_at: expect.any(String), revoked_at: null, last_used_at: null },
      { key_id: crm.key_id, name: 'crm', created_at: expect.any(String), revoked_at: expect.any(String), last_used_at: null },
    ]);
    expect(JSON.stringify(listed)).not.toContain(ci.api_key);
  });
});

describe('recordApiKeyUse', () => {
  it('sets last_used_at on first use, then at most once a minute', async () => {
    const acme = await customerRow(db.pool, 'Acme');
    const key = await createApiKey(db.pool, acme, 'ci');
    const lastUsed = async () => (await listApiKeys(db.pool, acme)).find((k) => k.key_id === key.key_id)!.last_used_at;
    expect(await recordApiKeyUse(db.pool, key.key_id)).toBe(true);
    const first = await lastUsed();
    expect(Date.now() - Date.parse(first!)).toBeLessThan(60_000);
    // Within the minute: no write, the first time stays.
    expect(await recordApiKeyUse(db.pool, key.key_id)).toBe(false);
    expect(await lastUsed()).toBe(first);
    // A minute later (the stored time moved back), the next use writes again.
    await db.pool.query(sql.typeAlias('void')`UPDATE api_keys SET last_used_at = last_used_at - interval '61 seconds' WHERE id = ${key.key_id}`);
    expect(await recordApiKeyUse(db.pool, key.key_id)).toBe(true);
    expect(Date.parse((await lastUsed())!)).toBeGreaterThanOrEqual(Date.parse(first!));
    expect(await recordApiKeyUse(db.pool, 'nokey')).toBe(false);
  });
});
