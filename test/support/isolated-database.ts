// For int test files that need Postgres only: an isolated, migrated database and a pool on it,
// made before the file's tests and dropped after them.
import { afterAll, beforeAll } from 'vitest';
import { createPool, type Pool, type PoolLimits } from '@gw/db';
import { isolate, type Isolation } from './infra.ts';

export function useIsolatedDatabase(limits: PoolLimits = { maxConnections: 2 }): { readonly pool: Pool; readonly isolation: Isolation } {
  let isolation: Isolation | undefined;
  let pool: Pool | undefined;
  beforeAll(async () => {
    isolation = await isolate();
    pool = await createPool(isolation.databaseUrl, limits);
  }, 120_000);
  afterAll(async () => {
    await pool?.end();
    await isolation?.cleanup();
  });
  return {
    get pool() {
      if (!pool) throw new Error('the isolated database is not set up yet');
      return pool;
    },
    get isolation() {
      if (!isolation) throw new Error('the isolated database is not set up yet');
      return isolation;
    },
  };
}
