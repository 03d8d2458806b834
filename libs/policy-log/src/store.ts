import { jsonOf, sql, type Queryable } from '@gw/db';
import type { SendDecided } from '@gw/events';
import { toLogRow } from './entry.ts';

/**
 * Inserts policy-log entries into the Postgres projection; an entry already there (same log_id
 * or command) is left as it is. Used by the projection rebuild for the entries recorded on the
 * decisions topic, and by tests (new decisions are written by applyPolicyBatch, with rows made the
 * same way).
 */
export async function insertEntries(db: Queryable, entries: SendDecided[]): Promise<number> {
  if (entries.length === 0) return 0;
  const result = await db.query(sql.typeAlias('void')`
    INSERT INTO policy_log SELECT * FROM json_populate_recordset(NULL::policy_log, ${jsonOf(entries.map(toLogRow))})
    ON CONFLICT DO NOTHING`);
  return result.rowCount;
}
