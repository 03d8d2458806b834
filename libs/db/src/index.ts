export { createPool, withTransaction, type Pool, type PoolClient } from './pool.ts';
export { migrate, ensureDatabase, dropDatabase } from './migrate.ts';
