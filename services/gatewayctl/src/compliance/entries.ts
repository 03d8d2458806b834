import { randomBytes } from 'node:crypto';
import { withTransaction, type PoolClient } from '@gw/db';
import type { RuleOutcome } from '@gw/events';

/**
 * Streams a query's rows in batches through a server-side cursor. Must run inside a transaction
 * (see readSnapshot), so memory stays bounded whatever the size of the log.
 */
export async function* cursor<T>(client: PoolClient, sql: string, params: unknown[] = [], batchSize = 1000): AsyncGenerator<T[]> {
  const name = `compliance_${randomBytes(4).toString('hex')}`;
  await client.query(`DECLARE ${name} NO SCROLL CURSOR FOR ${sql}`, params);
  try {
    for (;;) {
      const result = await client.query<T & object>(`FETCH FORWARD ${batchSize} FROM ${name}`);
      if (result.rows.length === 0) return;
      yield result.rows as T[];
    }
  } finally {
    await client.query(`CLOSE ${name}`).catch(() => undefined);
  }
}

/** A read-only, repeatable-read transaction: one consistent snapshot for a whole export or check. */
export function readSnapshot<T>(pool: { connect(): Promise<PoolClient> }, work: (client: PoolClient) => Promise<T>): Promise<T> {
  return withTransaction(pool, work, 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
}

/** The send's source is not a policy_log column; the first rule (module_enabled) always records it. */
export function sourceOf(reasons: RuleOutcome[]): string | null {
  const module = reasons.find((r) => r.rule === 'module_enabled');
  const detail = parseDetail(module?.detail ?? null) as { module?: unknown } | null;
  return typeof detail?.module === 'string' ? detail.module : null;
}

export function parseDetail(detail: string | null): unknown {
  if (detail === null) return null;
  try {
    return JSON.parse(detail);
  } catch {
    return detail;
  }
}
