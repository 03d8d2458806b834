export { createPool, withTransaction, type Pool, type PoolClient, type PoolLimits } from './pool.ts';
export { migrate, ensureDatabase, dropDatabase } from './migrate.ts';
