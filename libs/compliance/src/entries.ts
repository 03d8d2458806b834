import { randomBytes } from 'node:crypto';
import { sql, z, type Queryable } from '@gw/db';
import type { RuleOutcome } from '@gw/events';
import { PolicyLogRow } from '@gw/policy-log';

type Fragment = ReturnType<typeof sql.fragment>;

/** A `SELECT count(*) AS n`. */
export const Count = z.object({ n: z.number() });

/** The policy_log columns the compliance commands read: exactly those PolicyLogRow parses. */
export const POLICY_LOG_COLUMNS = sql.join(Object.keys(PolicyLogRow.shape).map((column) => sql.identifier([column])), sql.fragment`, `);

/**
 * Streams a query's rows in batches of 1,000 through a server-side cursor, each row parsed by
 * `row`. Must run inside a transaction (see readSnapshot), so memory stays bounded whatever the
 * size of the log. (FETCH takes its count as a literal, never as a parameter.)
 */
export async function* cursor<T extends z.ZodTypeAny>(tx: Queryable, row: T, query: Fragment): AsyncGenerator<ReadonlyArray<z.infer<T>>> {
  const name = sql.identifier([`compliance_${randomBytes(4).toString('hex')}`]);
  const fetch = sql.type(row)`FETCH FORWARD 1000 FROM ${name}`;
  await tx.query(sql.typeAlias('void')`DECLARE ${name} NO SCROLL CURSOR FOR ${query}`);
  try {
    for (;;) {
      const rows = await tx.any(fetch);
      if (rows.length === 0) return;
      yield rows;
    }
  } finally {
    await tx.query(sql.typeAlias('void')`CLOSE ${name}`).catch(() => undefined);
  }
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
