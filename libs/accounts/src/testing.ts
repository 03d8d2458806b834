// Fixtures for the account int tests: customers and instances made straight in an isolated
// database (no Kafka, no instance manager: neither is what these tests are about).
import { sql, type Queryable } from '@gw/db';
import { newId, SecretBox } from '@gw/security';
import { createInstance } from './instances.ts';

export const testBox = () => new SecretBox(`accounts-test-${newId('key')}`);

/** A customer row as createCustomer leaves it once its fact is acknowledged. */
export async function customerRow(pool: Queryable, name: string): Promise<string> {
  const id = newId('cus');
  await pool.query(sql.typeAlias('void')`INSERT INTO customers (id, name) VALUES (${id}, ${name})`);
  return id;
}

/** An instance on a manager that is never called. */
export async function instanceOf(pool: Queryable, box: SecretBox, customerId: string, name: string) {
  return createInstance(pool, box, { customerId, name, managerUrl: 'http://127.0.0.1:9', managerApiKey: `manager-key-${name}`, managerInstance: `mgr-${name}`, createOnManager: false });
}
