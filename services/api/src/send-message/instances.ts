import { BatchedLookup } from '@gw/batching';
import { sql, z, type Queryable } from '@gw/db';

export interface OwnedInstance {
  id: string;
  name: string;
  managerInstance: string;
}

type Key = `${string}\u0000${string}`;

const FoundInstance = z.object({ c: z.string(), k: z.string(), id: z.string(), name: z.string(), manager_instance: z.string() });

/**
 * Finds a customer's instance by id or by name (an id wins over another instance's name); another
 * customer's instance, or a deleted one, is simply not found. Concurrent requests share one query.
 */
export function instanceFinder(pool: Queryable): (customerId: string, idOrName: string) => Promise<OwnedInstance | null> {
  const lookup = new BatchedLookup<Key, OwnedInstance>(async (keys) => {
    const pairs = keys.map((key) => key.split('\u0000') as [string, string]);
    const rows = await pool.any(sql.type(FoundInstance)`
      SELECT DISTINCT ON (q.c, q.k) q.c, q.k, i.id, i.name, i.manager_instance
        FROM ${sql.unnest(pairs, ['text', 'text'])} AS q(c, k)
        JOIN instances i ON i.customer_id = q.c AND (i.id = q.k OR i.name = q.k) AND i.deleted_at IS NULL
       ORDER BY q.c, q.k, (i.id = q.k) DESC`);
    return new Map(rows.map((r) => [`${r.c}\u0000${r.k}` as Key, { id: r.id, name: r.name, managerInstance: r.manager_instance }]));
  });
  return async (customerId, idOrName) => (await lookup.get(`${customerId}\u0000${idOrName}`)) ?? null;
}
