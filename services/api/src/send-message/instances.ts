import type { Pool } from '@gw/db';

export interface OwnedInstance {
  id: string;
  name: string;
  managerInstance: string;
}

/** Finds a customer's instance by id or by name; another customer's instance is simply not found. */
export async function findOwnedInstance(pool: Pool, customerId: string, idOrName: string): Promise<OwnedInstance | null> {
  const result = await pool.query<{ id: string; name: string; manager_instance: string }>(
    'SELECT id, name, manager_instance FROM instances WHERE customer_id = $1 AND (id = $2 OR name = $2) ORDER BY (id = $2) DESC LIMIT 1',
    [customerId, idOrName],
  );
  const row = result.rows[0];
  return row ? { id: row.id, name: row.name, managerInstance: row.manager_instance } : null;
}
