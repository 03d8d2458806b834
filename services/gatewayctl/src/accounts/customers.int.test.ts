import { describe, expect, it } from 'vitest';
import { loadConfig } from '@gw/config';
import { sql, z } from '@gw/db';
import { useIsolatedDatabase } from '../../../../test/support/isolated-database.ts';
import { createCustomer } from '@gw/accounts';
import { FactLog } from '../policy/fact-log.ts';

// Customer creation writes to Kafka and to Postgres with no transaction across them: the fact
// goes first, and the row (which lets keys, instances and sends exist) only once it is acknowledged.
const db = useIsolatedDatabase();

const customerNamed = (name: string) => db.pool.maybeOne(sql.type(z.object({ id: z.string() }))`SELECT id FROM customers WHERE name = ${name}`);

describe('createCustomer', () => {
  it('records the customer once its fact is on the customer stream', async () => {
    const facts = new FactLog(loadConfig(db.isolation.env));
    try {
      const created = await createCustomer(db.pool, facts, 'Acme');
      expect(await customerNamed('Acme')).toEqual({ id: created.customer_id });
    } finally {
      await facts.close();
    }
  });

  it('leaves no customer row when the fact cannot be appended', async () => {
    // A real failure, not a stand-in: the schema registry the fact must be encoded with is not there.
    const facts = new FactLog(loadConfig({ ...db.isolation.env, SCHEMA_REGISTRY_URL: 'http://127.0.0.1:9/apis/ccompat/v7' }));
    try {
      await expect(createCustomer(db.pool, facts, 'Unregistered')).rejects.toThrow();
      expect(await customerNamed('Unregistered')).toBeNull();
    } finally {
      await facts.close().catch(() => undefined);
    }
  });
});
