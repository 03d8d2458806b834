import type { Pool } from '@gw/db';
import { newId } from '@gw/security';
import type { FactLog } from '../policy/fact-log.ts';

/** The account record, and the CustomerRegistered fact the policy engine starts the customer from. */
export async function createCustomer(pool: Pool, facts: FactLog, name: string) {
  const id = newId('cus');
  await pool.query('INSERT INTO customers (id, name) VALUES ($1, $2)', [id, name]);
  await facts.append({ type: 'CustomerRegistered', customerId: id, at: Date.now() });
  return { customer_id: id, name };
}

export async function requireCustomer(pool: Pool, customerId: string): Promise<void> {
  const found = await pool.query('SELECT 1 FROM customers WHERE id = $1', [customerId]);
  if (found.rowCount === 0) throw new CliError(`No customer ${customerId}.`);
}

/** An error whose message is meant for the operator; anything else is reported generically. */
export class CliError extends Error {}
