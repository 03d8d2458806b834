import pg from 'pg';

export type Pool = pg.Pool;
export type PoolClient = pg.PoolClient;

// BIGINT columns (log ids, counters) come back as JS numbers: they stay far below 2^53.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));

export interface PoolLimits {
  /** Waiting for a connection (from the pool, or a new one) at most this long. */
  connectTimeoutMs?: number;
  /** One statement at most this long, on the server (statement_timeout) and on the client. */
  statementTimeoutMs?: number;
  /** A transaction idle between statements at most this long (default: twice the statement limit, at least a minute). */
  idleInTransactionMs?: number;
}

/**
 * A pool whose every wait is bounded: a connection, a statement, and a transaction left idle
 * (a process stuck between BEGIN and COMMIT must not hold row locks for ever).
 */
export function createPool(databaseUrl: string, max = 10, limits: PoolLimits = {}): Pool {
  const statementTimeoutMs = limits.statementTimeoutMs ?? 30_000;
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    max,
    idleTimeoutMillis: 30_000,
    connectionTimeoutMillis: limits.connectTimeoutMs ?? 10_000,
    statement_timeout: statementTimeoutMs,
    // The client gives up a little after the server would have: a lost connection, not a slow statement.
    query_timeout: statementTimeoutMs + 5_000,
    idle_in_transaction_session_timeout: limits.idleInTransactionMs ?? Math.max(statementTimeoutMs * 2, 60_000),
    keepAlive: true,
  });
  // An idle client losing its connection must not crash the process; the next query reconnects.
  pool.on('error', () => undefined);
  // Nor a checked-out one (the server ended its session: a restart, pg_terminate_backend, an idle
  // transaction past its limit): its query in flight fails with the reason, and the client is
  // discarded on release. Without a listener its 'error' event would end the process.
  pool.on('connect', (client) => client.on('error', () => undefined));
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
