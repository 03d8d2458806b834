import { once } from 'node:events';
import type { Writable } from 'node:stream';
import { csvLine } from '@gw/contract';
import { readSnapshot, sql, type Pool } from '@gw/db';
import { fromLogRow, PolicyLogRow } from '@gw/policy-log';
import { Count, cursor, POLICY_LOG_COLUMNS } from './entries.ts';
import type { ProgressCallback } from './progress.ts';

export type ExportFormat = 'ndjson' | 'csv';

export interface ExportOptions {
  /** Inclusive lower bound of decided_at. */
  from: Date;
  /** Exclusive upper bound of decided_at. */
  to: Date;
  customerId?: string;
  format: ExportFormat;
  onProgress?: ProgressCallback;
}

export const CSV_COLUMNS = [
  'log_id', 'decided_at', 'occurred_at', 'command_id', 'event_id', 'customer_id', 'instance_id', 'message_id', 'recipient',
  'message_purpose', 'message_digest', 'decision', 'error_code', 'error_message', 'reasons', 'policy_version',
  'partition_chain', 'prev_hash', 'entry_hash',
] as const;

function exportRecord(row: PolicyLogRow) {
  return {
    log_id: row.log_id,
    decided_at: row.decided_at.toISOString(),
    occurred_at: fromLogRow(row).occurred_at,
    command_id: row.command_id,
    event_id: row.event_id,
    customer_id: row.customer_id,
    instance_id: row.instance_id,
    message_id: row.message_id,
    recipient: row.recipient,
    message_purpose: row.message_purpose,
    message_digest: row.message_digest,
    decision: row.decision,
    error_code: row.error_code,
    error_message: row.error_message,
    reasons: row.reasons,
    policy_version: row.policy_version,
    partition_chain: row.partition_chain,
    prev_hash: row.prev_hash,
    entry_hash: row.entry_hash,
  };
}

/**
 * Streams the entries decided in [from, to) in log_id order, from one snapshot through a server-side
 * cursor, honouring the output's back-pressure: memory stays bounded by one batch.
 */
export async function exportPolicyLog(pool: Pool, out: Writable, options: ExportOptions): Promise<{ rows: number }> {
  const customer = options.customerId ? sql.fragment` AND customer_id = ${options.customerId}` : sql.fragment``;
  const where = sql.fragment`decided_at >= ${options.from.toISOString()}::timestamptz AND decided_at < ${options.to.toISOString()}::timestamptz${customer}`;
  return readSnapshot(pool, async (tx) => {
    const total = await tx.oneFirst(sql.type(Count)`SELECT count(*) AS n FROM policy_log WHERE ${where}`);
    let rows = 0;
    const write = async (chunk: string) => {
      if (!out.write(chunk)) await once(out, 'drain');
    };
    if (options.format === 'csv') await write(csvLine(CSV_COLUMNS));
    const query = sql.fragment`SELECT ${POLICY_LOG_COLUMNS} FROM policy_log WHERE ${where} ORDER BY log_id`;
    for await (const batch of cursor(tx, PolicyLogRow, query)) {
      let chunk = '';
      for (const row of batch) {
        const record = exportRecord(row);
        chunk += options.format === 'ndjson' ? `${JSON.stringify(record)}\n` : csvLine(CSV_COLUMNS.map((c) => record[c]));
      }
      await write(chunk);
      rows += batch.length;
      options.onProgress?.({ phase: 'exporting', done: rows, total });
    }
    return { rows };
  });
}
