import { runner } from 'node-pg-migrate';
import { fileURLToPath } from 'node:url';
import { UniqueIntegrityConstraintViolationError } from 'slonik';
import { createPool, type Pool } from './pool.ts';
import { sql } from './sql.ts';

const MIGRATIONS_DIR = fileURLToPath(new URL('../migrations/', import.meta.url));

/** The database a URL names, and a URL of the server's own `postgres` database to manage it from. */
function target(databaseUrl: string): { name: string; serverUrl: string } {
  const url = new URL(databaseUrl);
  const name = decodeURIComponent(url.pathname.replace(/^\//, ''));
  if (!/^[a-zA-Z0-9_]+$/.test(name)) throw new Error(`unsupported database name "${name}"`);
  url.pathname = '/postgres';
  return { name, serverUrl: url.toString() };
}

async function onServer<T>(serverUrl: string, work: (pool: Pool) => Promise<T>): Promise<T> {
  const pool = await createPool(serverUrl, { maxConnections: 1 });
  try {
    return await work(pool);
  } finally {
    await pool.end();
  }
}

/** Creates the database named in the URL when it does not exist yet (the server itself must be up). */
export async function ensureDatabase(databaseUrl: string): Promise<void> {
  const { name, serverUrl } = target(databaseUrl);
  await onServer(serverUrl, async (pool) => {
    if (await pool.exists(sql.unsafe`SELECT FROM pg_database WHERE datname = ${name}`)) return;
    try {
      await pool.query(sql.typeAlias('void')`CREATE DATABASE ${sql.identifier([name])}`);
    } catch (error) {
      // Created concurrently by another process (42P04 duplicate_database, or the catalog's unique index).
      const code = (error as { code?: string; cause?: { code?: string } }).code ?? (error as { cause?: { code?: string } }).cause?.code;
      if (code !== '42P04' && !(error instanceof UniqueIntegrityConstraintViolationError)) throw error;
    }
  });
}

export async function dropDatabase(databaseUrl: string): Promise<void> {
  const { name, serverUrl } = target(databaseUrl);
  await onServer(serverUrl, (pool) => pool.query(sql.typeAlias('void')`DROP DATABASE IF EXISTS ${sql.identifier([name])} WITH (FORCE)`));
}

/** Applies every pending versioned migration in migrations/ (node-pg-migrate, SQL files). */
export async function migrate(databaseUrl: string, log: (line: string) => void = () => undefined): Promise<void> {
  await ensureDatabase(databaseUrl);
  await runner({
    databaseUrl,
    dir: MIGRATIONS_DIR,
    direction: 'up',
    migrationsTable: 'pgmigrations',
    count: Infinity,
    checkOrder: true,
    singleTransaction: true,
    log,
    verbose: false,
  });
}
