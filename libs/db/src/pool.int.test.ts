import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isolate, type Isolation } from '../../../test/support/infra.ts';
import { createPool, withTransaction } from './pool.ts';

// Every wait on Postgres is bounded: a statement, a connection, a transaction left idle.
let isolation: Isolation;

beforeAll(async () => {
  isolation = await isolate();
}, 60_000);

afterAll(async () => {
  await isolation?.cleanup();
});

describe('createPool', () => {
  it('cancels a statement past its time limit (57014)', async () => {
    const pool = createPool(isolation.databaseUrl, 2, { statementTimeoutMs: 300 });
    try {
      await expect(pool.query('SELECT pg_sleep(5)')).rejects.toMatchObject({ code: '57014' });
      await expect(pool.query('SELECT 1 AS one')).resolves.toMatchObject({ rows: [{ one: 1 }] });
    } finally {
      await pool.end();
    }
  });

  it('gives up waiting for a connection when the pool stays busy', async () => {
    const pool = createPool(isolation.databaseUrl, 1, { connectTimeoutMs: 300, statementTimeoutMs: 5_000 });
    try {
      const busy = pool.query('SELECT pg_sleep(1.5)');
      await expect(pool.query('SELECT 1')).rejects.toThrow(/timeout exceeded when trying to connect/);
      await busy;
    } finally {
      await pool.end();
    }
  });

  it('ends a transaction left idle, so its locks are not held for ever', async () => {
    const pool = createPool(isolation.databaseUrl, 2, { idleInTransactionMs: 300 });
    try {
      await pool.query('CREATE TABLE held (id int PRIMARY KEY)');
      await pool.query('INSERT INTO held VALUES (1)');
      const stuck = withTransaction(pool, async (client) => {
        await client.query('SELECT * FROM held WHERE id = 1 FOR UPDATE');
        await new Promise((r) => setTimeout(r, 1_000)); // a process stuck between statements
        await client.query('SELECT 1');
      });
      await expect(stuck).rejects.toThrow();
      // The lock went with the session: another transaction takes the row at once.
      await expect(withTransaction(pool, (client) => client.query('SELECT * FROM held WHERE id = 1 FOR UPDATE NOWAIT'))).resolves.toBeDefined();
    } finally {
      await pool.end();
    }
  });
});
