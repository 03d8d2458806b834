// The policy-log export as a download: @gw/compliance's exportPolicyLog writes into a PassThrough
// that fastify sends, so the entries stream from one Postgres snapshot to the browser with the
// browser's pace (back-pressure: the cursor fetches the next batch only once the last one went
// out). The headers go once the entries are counted in that snapshot (X-Total-Entries, for the
// page's progress bar). A client that goes away stops the cursor; a failure after the start ends
// the response abruptly (no error text in the file; the browser sees an incomplete download), and
// one before it is an error page.
import { PassThrough } from 'node:stream';
import { ExportAborted, exportPolicyLog, type ExportFormat, type PolicyLogFilter } from '@gw/compliance';
import type { Pool } from '@gw/db';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { PageError } from '../sessions/guards.ts';
import { downloadName } from './query.ts';

export const CONTENT_TYPES: Record<ExportFormat, string> = {
  csv: 'text/csv; charset=utf-8',
  ndjson: 'application/x-ndjson; charset=utf-8',
};

/** The header with the number of entries the file holds. */
export const TOTAL_HEADER = 'x-total-entries';

/**
 * Lets a long answer stay silent longer than the server's idle timeout (a verification computes
 * for minutes before it writes), and restores the timeout once the answer is sent.
 */
export function allowSilence(request: FastifyRequest, reply: FastifyReply, ms: number): void {
  const socket = request.raw.socket as { timeout?: number; setTimeout?: (ms: number) => unknown } | undefined;
  if (!socket || typeof socket.setTimeout !== 'function') return;
  const before = socket.timeout ?? 0;
  socket.setTimeout(ms);
  reply.raw.once('close', () => socket.setTimeout?.(before));
}

export interface ExportDownload {
  pool: Pool;
  filter: PolicyLogFilter & { customerId: string };
  format: ExportFormat;
  /** Told the kind of a failure (never its message: it may hold data). */
  onFailure: (error: unknown) => void;
  now?: Date;
}

export async function sendExport(request: FastifyRequest, reply: FastifyReply, download: ExportDownload): Promise<FastifyReply> {
  const out = new PassThrough();
  const abort = new AbortController();
  // 'close' comes at the end of every answer; after a whole export it changes nothing.
  reply.raw.once('close', () => abort.abort());
  allowSilence(request, reply, 120_000);
  let announce!: (total: number) => void;
  const started = new Promise<number>((resolve) => (announce = resolve));
  let begun = false;
  const running = exportPolicyLog(download.pool, out, {
    ...download.filter,
    format: download.format,
    signal: abort.signal,
    onStart: (total) => {
      begun = true;
      announce(total);
    },
  });
  running.then(
    () => out.end(),
    (error: unknown) => {
      if (!(error instanceof ExportAborted)) download.onFailure(error);
      // Cut short, not ended: the browser must not take a partial file for a whole one.
      out.destroy(begun ? new Error('the policy log export stopped before its end') : undefined);
    },
  );
  let total: number;
  try {
    const first = await Promise.race([started, running]);
    total = typeof first === 'number' ? first : first.total;
  } catch {
    throw new PageError(503, 'Export not started', 'Your policy log could not be read just now. Nothing was downloaded. Try again in a moment.', { href: '/policy-log', label: 'Back to the policy log' });
  }
  const ext = download.format === 'csv' ? 'csv' : 'ndjson';
  return reply
    .header('content-type', CONTENT_TYPES[download.format])
    .header('content-disposition', `attachment; filename="${downloadName('policy-log', download.now ?? new Date(), ext)}"`)
    .header('cache-control', 'no-store')
    .header(TOTAL_HEADER, String(total))
    .send(out);
}
