// The CSV export of /suppressed-recipients: the current suppressions matching the page's filters,
// one line per suppression, read in keyset batches (each its own short query, no transaction held
// while the browser downloads), so memory stays bounded by one batch whatever the list's size.
import { csvLine } from '@gw/contract';
import type { Queryable } from '@gw/db';
import { currentSuppressions, type CurrentRow } from './data.ts';
import { spreadsheetSafe, type SuppressionQuery } from './query.ts';

export const CSV_COLUMNS = ['recipient', 'source', 'reason', 'by', 'since', 'cause_text', 'cause_received_at', 'instance'] as const;

/** Rows read per query. */
export const CSV_BATCH = 500;

/** One line: codes and times as stored (ISO 8601, UTC), free text made safe for spreadsheets. */
export function csvRow(row: CurrentRow): string {
  return csvLine([
    row.recipient,
    row.source,
    spreadsheetSafe(row.reason),
    spreadsheetSafe(row.created_by),
    row.created_at.toISOString(),
    spreadsheetSafe(row.cause_text),
    row.cause_received_at?.toISOString() ?? '',
    spreadsheetSafe(row.instance_name ?? row.cause_instance_id),
  ]);
}

/** The file's name: suppressed-recipients-<UTC date>.csv. */
export const csvFileName = (now: Date) => `suppressed-recipients-${now.toISOString().slice(0, 10)}.csv`;

/**
 * The export's text in chunks (the header line, then one chunk per batch). The first batch is read
 * before anything is yielded, so a failing database shows as an error page, not a cut file.
 */
export async function csvExport(db: Queryable, customerId: string, q: Pick<SuppressionQuery, 'source' | 'phone' | 'days'>, batch = CSV_BATCH): Promise<AsyncGenerator<string>> {
  const first = await currentSuppressions(db, customerId, q, { limit: batch, after: null });
  async function* chunks(): AsyncGenerator<string> {
    let rows = first;
    let chunk = csvLine(CSV_COLUMNS);
    for (;;) {
      for (const row of rows) chunk += csvRow(row);
      yield chunk;
      chunk = '';
      if (rows.length < batch) return;
      const last = rows[rows.length - 1]!;
      rows = await currentSuppressions(db, customerId, q, { limit: batch, after: { sinceKey: last.since_key, recipient: last.recipient, source: last.source } });
    }
  }
  return chunks();
}
