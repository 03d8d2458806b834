import type { Pool } from '@gw/db';
import { newId } from '@gw/security';

export async function createCustomer(pool: Pool, name: string) {
  const id = newId('cus');
  await pool.query('INSERT INTO customers (id, name) VALUES ($1, $2)', [id, name]);
  return { customer_id: id, name };
}

export async function requireCustomer(pool: Pool, customerId: string): Promise<void> {
  const found = await pool.query('SELECT 1 FROM customers WHERE id = $1', [customerId]);
  if (found.rowCount === 0) throw new CliError(`No customer ${customerId}.`);
}

/** An error whose message is meant for the operator; anything else is reported generically. */
export class CliError extends Error {}
