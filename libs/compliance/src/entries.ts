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
 * PolicyLogRow for verify's one hot read (every row of the log, chain by chain: decisions.ts):
 * the same checks, written out, on the row pg built, which is returned as is. zod's object parse
 * copies every row into a new object (2.4 s and a share of the garbage of a 200,000-entry verify);
 * every other read of policy_log parses with PolicyLogRow itself. The unit test holds the two to
 * the same verdicts.
 */
export const CheckedPolicyLogRow = {
  columns: Object.keys(PolicyLogRow.shape),
  parser: z.custom<PolicyLogRow>(isPolicyLogRow, 'not a policy_log row'),
};

const isString = (value: unknown): value is string => typeof value === 'string';
const isStringOrNull = (value: unknown) => value === null || typeof value === 'string';
const isNumber = (value: unknown) => typeof value === 'number' && !Number.isNaN(value);

function isPolicyLogRow(value: unknown): value is PolicyLogRow {
  if (typeof value !== 'object' || value === null) return false;
  const row = value as Record<keyof PolicyLogRow, unknown>;
  return (
    isNumber(row.log_id) &&
    isString(row.command_id) &&
    isString(row.event_id) &&
    isString(row.customer_id) &&
    isString(row.instance_id) &&
    isString(row.message_id) &&
    isString(row.recipient) &&
    isString(row.message_purpose) &&
    isString(row.message_digest) &&
    (row.decision === 'accepted' || row.decision === 'rejected') &&
    isStringOrNull(row.error_code) &&
    isStringOrNull(row.error_message) &&
    Array.isArray(row.reasons) &&
    isString(row.policy_version) &&
    row.decided_at instanceof Date &&
    !Number.isNaN(row.decided_at.getTime()) &&
    typeof row.decision_event === 'object' &&
    row.decision_event !== null &&
    isNumber(row.partition_chain) &&
    isString(row.prev_hash) &&
    isString(row.entry_hash)
  );
}

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
