// The policy-log export, one format for everyone who reads the log as a file: `gatewayctl
// policy-log export` (the operator, any customer) and the dashboard's download (one customer, the
// page's filters). Entries stream from one snapshot through a server-side cursor in log_id order,
// honouring the output's back-pressure, so memory stays bounded by one batch whatever the size.
import type { Writable } from 'node:stream';
import { csvLine } from '@gw/contract';
import { readSnapshot, sql, type Pool } from '@gw/db';
import { fromLogRow, PolicyLogRow } from '@gw/policy-log';
import { Count, cursor, POLICY_LOG_COLUMNS } from './entries.ts';
import type { ProgressCallback } from './progress.ts';

export type ExportFormat = 'ndjson' | 'csv';

/** A condition to put after WHERE. */
export type SqlCondition = ReturnType<typeof sql.fragment>;

export const EXPORT_FORMATS: readonly ExportFormat[] = ['csv', 'ndjson'];

/**
 * Which entries: every condition given is applied (AND); an absent one does not filter. The
 * dashboard always names the customer; gatewayctl may leave it out (every customer).
 */
export interface PolicyLogFilter {
  customerId?: string | null;
  /** Inclusive lower bound of decided_at. */
  from?: Date | null;
  /** Exclusive upper bound of decided_at. */
  to?: Date | null;
  decision?: 'accepted' | 'rejected' | null;
  errorCode?: string | null;
  purpose?: string | null;
  instanceId?: string | null;
  /** Digits the recipient contains (E.164 numbers: '+' and digits). */
  recipientDigits?: string | null;
}

export interface ExportOptions extends PolicyLogFilter {
  format: ExportFormat;
  onProgress?: ProgressCallback;
  /**
   * Called once the matching entries are counted (in the export's own snapshot), before anything
   * is written: an HTTP answer sends its headers (the total among them) from here.
   */
  onStart?: (total: number) => void;
  /** Stops the export (the cursor is closed, the snapshot ended): a download whose client went away. */
  signal?: AbortSignal;
}

/** Thrown when the output closed or the signal aborted before the export was written whole. */
export class ExportAborted extends Error {
  constructor() {
    super('the policy-log export was stopped before its end');
    this.name = 'ExportAborted';
  }
}

export const CSV_COLUMNS = [
  'log_id', 'decided_at', 'occurred_at', 'command_id', 'event_id', 'customer_id', 'instance_id', 'message_id', 'recipient',
  'message_purpose', 'message_digest', 'decision', 'error_code', 'error_message', 'reasons', 'policy_version',
  'partition_chain', 'prev_hash', 'entry_hash',
] as const;

/** One entry as the export writes it (an NDJSON line, or a CSV line in CSV_COLUMNS order). */
export function exportRecord(row: PolicyLogRow) {
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

/** The export's text of a batch of rows. */
export function exportLines(rows: readonly PolicyLogRow[], format: ExportFormat): string {
  let chunk = '';
  for (const row of rows) {
    const record = exportRecord(row);
    chunk += format === 'ndjson' ? `${JSON.stringify(record)}\n` : csvLine(CSV_COLUMNS.map((c) => record[c]));
  }
  return chunk;
}

/**
 * The WHERE condition of a filter over policy_log (no alias): the one definition the dashboard's
 * list, its count and the export share, so a download holds exactly what the page listed.
 */
export function policyLogWhere(filter: PolicyLogFilter): SqlCondition {
  const conditions = [sql.fragment`TRUE`];
  if (filter.customerId) conditions.push(sql.fragment`customer_id = ${filter.customerId}`);
  if (filter.from) conditions.push(sql.fragment`decided_at >= ${filter.from.toISOString()}::timestamptz`);
  if (filter.to) conditions.push(sql.fragment`decided_at < ${filter.to.toISOString()}::timestamptz`);
  if (filter.decision) conditions.push(sql.fragment`decision = ${filter.decision}`);
  if (filter.errorCode) conditions.push(sql.fragment`error_code = ${filter.errorCode}`);
  if (filter.purpose) conditions.push(sql.fragment`message_purpose = ${filter.purpose}`);
  if (filter.instanceId) conditions.push(sql.fragment`instance_id = ${filter.instanceId}`);
  // strpos, not LIKE: the digits are taken literally, with no pattern characters to escape.
  if (filter.recipientDigits) conditions.push(sql.fragment`strpos(recipient, ${filter.recipientDigits}) > 0`);
  return sql.fragment`${sql.join(conditions, sql.fragment` AND `)}`;
}

/**
 * Writes a chunk, waiting while the output is full. Throws ExportAborted when the output is
 * closed or destroyed (a client that went away never drains) or the signal aborts.
 */
async function writeChunk(out: Writable, chunk: string, signal: AbortSignal | undefined): Promise<void> {
  if (signal?.aborted || out.destroyed || out.writableEnded) throw new ExportAborted();
  if (out.write(chunk)) return;
  await new Promise<void>((resolve, reject) => {
    const done = (error?: Error) => {
      out.off('drain', drained);
      out.off('close', gone);
      out.off('error', gone);
      signal?.removeEventListener('abort', gone);
      if (error) reject(error);
      else resolve();
    };
    const drained = () => done();
    const gone = () => done(new ExportAborted());
    out.once('drain', drained);
    out.once('close', gone);
    out.once('error', gone);
    signal?.addEventListener('abort', gone, { once: true });
  });
}

/**
 * Streams the entries matching the filter in log_id order, from one snapshot through a server-side
 * cursor, honouring the output's back-pressure: memory stays bounded by one batch. The output is
 * not ended here (the caller owns it: stdout stays open). The count and the rows come from the same
 * snapshot, so `total` (and onStart's) is exactly the number of entries written.
 */
export async function exportPolicyLog(pool: Pool, out: Writable, options: ExportOptions): Promise<{ rows: number; total: number }> {
  const where = policyLogWhere(options);
  return readSnapshot(pool, async (tx) => {
    const total = await tx.oneFirst(sql.type(Count)`SELECT count(*) AS n FROM policy_log WHERE ${where}`);
    options.onStart?.(total);
    let rows = 0;
    if (options.format === 'csv') await writeChunk(out, csvLine(CSV_COLUMNS), options.signal);
    const query = sql.fragment`SELECT ${POLICY_LOG_COLUMNS} FROM policy_log WHERE ${where} ORDER BY log_id`;
    for await (const batch of cursor(tx, PolicyLogRow, query)) {
      await writeChunk(out, exportLines(batch, options.format), options.signal);
      rows += batch.length;
      options.onProgress?.({ phase: 'exporting', done: rows, total });
    }
    return { rows, total };
  });
}
