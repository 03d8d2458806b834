import pg from 'pg';

export type Pool = pg.Pool;
export type PoolClient = pg.PoolClient;

// BIGINT columns (log ids, counters) come back as JS numbers: they stay far below 2^53.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));

export function createPool(databaseUrl: string, max = 10): Pool {
  const pool = new pg.Pool({ connectionString: databaseUrl, max, idleTimeoutMillis: 30_000 });
  // An idle client losing its connection must not crash the process; the next query reconnects.
  pool.on('error', () => undefined);
  return pool;
}

/** Runs work in one transaction; `begin` can ask for another isolation level or read-only. */
export async function withTransaction<T>(
  pool: { connect(): Promise<PoolClient> },
  work: (client: PoolClient) => Promise<T>,
  begin = 'BEGIN',
): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query(begin);
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}
