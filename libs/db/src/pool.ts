import {
  createPool as createSlonikPool,
  type CommonQueryMethods,
  type DatabasePool,
  type DatabaseTransactionConnection,
  type DriverTypeParser,
} from 'slonik';
import { rowParser, sql } from './sql.ts';

/** A pool of Postgres connections, through slonik (pg is only slonik's driver). */
export type Pool = DatabasePool;
/** What a query runs on: the pool, or one connection or transaction taken from it. */
export type Queryable = CommonQueryMethods;
export type Transaction = DatabaseTransactionConnection;

export interface PoolLimits {
  /** Connections held at most (default 10). */
  maxConnections?: number;
  /** Waiting for a connection (from the pool, or a new one) at most this long. */
  connectTimeoutMs?: number;
  /** One statement at most this long (the server's statement_timeout). */
  statementTimeoutMs?: number;
  /** A transaction idle between statements at most this long (default: twice the statement limit, at least a minute). */
  idleInTransactionMs?: number;
}

// BIGINT columns (log ids, counters, offsets) come back as numbers: they stay far below 2^53.
// Other types keep node-postgres's parsing (timestamptz: a Date).
const int8AsNumber: DriverTypeParser = { name: 'int8', parse: (value) => Number(value) };

/**
 * A pool whose every wait is bounded: a connection, a statement, and a transaction left idle
 * (a process stuck between BEGIN and COMMIT must not hold row locks for ever). Slonik retries
 * nothing here: the caller decides (a stage retries its batch, a request answers an error), so a
 * transaction's work never runs twice unseen.
 */
export async function createPool(databaseUrl: string, limits: PoolLimits = {}): Promise<Pool> {
  const statementTimeoutMs = limits.statementTimeoutMs ?? 30_000;
  return createSlonikPool(databaseUrl, {
    maximumPoolSize: limits.maxConnections ?? 10,
    connectionTimeout: limits.connectTimeoutMs ?? 10_000,
    statementTimeout: statementTimeoutMs,
    idleInTransactionSessionTimeout: limits.idleInTransactionMs ?? Math.max(statementTimeoutMs * 2, 60_000),
    idleTimeout: 30_000,
    connectionRetryLimit: 0,
    queryRetryLimit: 0,
    transactionRetryLimit: 0,
    // Slonik's default sends DISCARD ALL on every release, a round trip more per query. Our code
    // leaves no session state behind (settings and cursors are transaction-scoped; no session
    // advisory locks, temporary tables or prepared statements), so there is nothing to discard.
    resetConnection: async () => undefined,
    typeParsers: [int8AsNumber],
    interceptors: [rowParser()],
  });
}

/**
 * A read-only transaction on one snapshot (repeatable read): an export, a check or a rebuild
 * source sees the log as it stood when it began, however long it runs.
 */
export function readSnapshot<T>(pool: Pool, work: (tx: Transaction) => Promise<T>): Promise<T> {
  return pool.transaction(async (tx) => {
    await tx.query(sql.typeAlias('void')`SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY`);
    return work(tx);
  });
}
