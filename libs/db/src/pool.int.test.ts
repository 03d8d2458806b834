import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SchemaValidationError, StatementTimeoutError } from 'slonik';
import { isolate, type Isolation } from '../../../test/support/infra.ts';
import { createPool } from './pool.ts';
import { sql, z } from './sql.ts';

// Every wait on Postgres is bounded (a statement, a connection, a transaction left idle), and
// every typed row is parsed at the boundary.
let isolation: Isolation;

beforeAll(async () => {
  isolation = await isolate();
}, 60_000);

afterAll(async () => {
  await isolation?.cleanup();
});

describe('createPool', () => {
  it('cancels a statement past its time limit (57014)', async () => {
    const pool = await createPool(isolation.databaseUrl, { maxConnections: 2, statementTimeoutMs: 300 });
    try {
      await expect(pool.query(sql.typeAlias('void')`SELECT pg_sleep(5)`)).rejects.toBeInstanceOf(StatementTimeoutError);
      expect(await pool.oneFirst(sql.type(z.object({ one: z.number() }))`SELECT 1 AS one`)).toBe(1);
    } finally {
      await pool.end();
    }
  });

  it('a query waiting for the only connection gets it once the holder is cut at the statement limit', async () => {
    // Slonik's pool has no limit on the wait itself: every holder is bounded (a statement, an idle
    // transaction), so the wait is too.
    const pool = await createPool(isolation.databaseUrl, { maxConnections: 1, statementTimeoutMs: 300 });
    try {
      const busy = pool.query(sql.typeAlias('void')`SELECT pg_sleep(5)`);
      const waiting = pool.oneFirst(sql.type(z.object({ one: z.number() }))`SELECT 1 AS one`);
      await expect(busy).rejects.toBeInstanceOf(StatementTimeoutError);
      expect(await waiting).toBe(1);
    } finally {
      await pool.end();
    }
  });

  it('ends a transaction left idle, so its locks are not held for ever', async () => {
    const pool = await createPool(isolation.databaseUrl, { maxConnections: 2, idleInTransactionMs: 300 });
    try {
      await pool.query(sql.typeAlias('void')`CREATE TABLE held (id int PRIMARY KEY)`);
      await pool.query(sql.typeAlias('void')`INSERT INTO held VALUES (1)`);
      const stuck = pool.transaction(async (tx) => {
        await tx.query(sql.unsafe`SELECT * FROM held WHERE id = 1 FOR UPDATE`);
        await new Promise((r) => setTimeout(r, 1_000)); // a process stuck between statements
        await tx.query(sql.unsafe`SELECT 1`);
      });
      await expect(stuck).rejects.toThrow();
      // The lock went with the session: another transaction takes the row at once.
      await expect(pool.transaction((tx) => tx.query(sql.unsafe`SELECT * FROM held WHERE id = 1 FOR UPDATE NOWAIT`))).resolves.toBeDefined();
    } finally {
      await pool.end();
    }
  });

  it('reads BIGINT as a number and refuses a row that does not match its schema', async () => {
    const pool = await createPool(isolation.databaseUrl, { maxConnections: 1 });
    try {
      expect(await pool.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT 9007199254740991::int8 AS n`)).toBe(9007199254740991);
      await expect(pool.one(sql.type(z.object({ n: z.string() }))`SELECT 1::int8 AS n`)).rejects.toBeInstanceOf(SchemaValidationError);
    } finally {
      await pool.end();
    }
  });
});
