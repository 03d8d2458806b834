import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runner } from 'node-pg-migrate';
import pg from 'pg';
import { UniqueIntegrityConstraintViolationError } from 'slonik';
import { createPool, type Pool } from './pool.ts';
import { sql } from './sql.ts';

const MIGRATIONS_DIR = fileURLToPath(new URL('../migrations/', import.meta.url));
const FUNCTIONS_DIR = fileURLToPath(new URL('../functions/', import.meta.url));

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

/**
 * Applies every pending versioned migration in migrations/ (node-pg-migrate, SQL files), then the
 * repeatable definitions in functions/.
 */
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
  await applyFunctions(databaseUrl, log);
}

/**
 * The repeatable step: every functions/*.sql (CREATE OR REPLACE, one definition per function, in
 * name order) applied on every migrate, after the numbered migrations whose tables they use. One
 * transaction under an advisory lock: two processes migrating at once would otherwise race on the
 * catalog ("tuple concurrently updated"). Plain node-postgres, as node-pg-migrate runs the numbered
 * files: a file is sent as it is (a function body is one statement with `$$` quoting).
 */
export async function applyFunctions(databaseUrl: string, log: (line: string) => void = () => undefined): Promise<void> {
  const files = readdirSync(FUNCTIONS_DIR).filter((file) => file.endsWith('.sql')).sort();
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query('BEGIN');
    await client.query("SELECT pg_advisory_xact_lock(hashtext('gw-db-functions'))");
    for (const file of files) {
      await client.query(readFileSync(join(FUNCTIONS_DIR, file), 'utf8'));
      log(`applied functions/${file}`);
    }
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    await client.end();
  }
}
