import { BatchedLookup } from '@gw/batching';
import type { Pool } from '@gw/db';

export interface OwnedInstance {
  id: string;
  name: string;
  managerInstance: string;
}

type Key = `${string}\u0000${string}`;

/**
 * Finds a customer's instance by id or by name (an id wins over another instance's name); another
 * customer's instance is simply not found. Concurrent requests share one query.
 */
export function instanceFinder(pool: Pool): (customerId: string, idOrName: string) => Promise<OwnedInstance | null> {
  const lookup = new BatchedLookup<Key, OwnedInstance>(async (keys) => {
    const pairs = keys.map((key) => key.split('\u0000') as [string, string]);
    const result = await pool.query<{ c: string; k: string; id: string; name: string; manager_instance: string }>(
      `SELECT DISTINCT ON (q.c, q.k) q.c, q.k, i.id, i.name, i.manager_instance
         FROM unnest($1::text[], $2::text[]) AS q(c, k)
         JOIN instances i ON i.customer_id = q.c AND (i.id = q.k OR i.name = q.k)
        ORDER BY q.c, q.k, (i.id = q.k) DESC`,
      [pairs.map((p) => p[0]), pairs.map((p) => p[1])],
    );
    return new Map(result.rows.map((r) => [`${r.c}\u0000${r.k}` as Key, { id: r.id, name: r.name, managerInstance: r.manager_instance }]));
  });
  return async (customerId, idOrName) => (await lookup.get(`${customerId}\u0000${idOrName}`)) ?? null;
}
