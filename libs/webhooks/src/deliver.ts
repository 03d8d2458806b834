import { performance } from 'node:perf_hooks';
import { request } from 'undici';
import { WebhookDestinationError, type SsrfGuard } from './ssrf.ts';

/**
 * One HTTP attempt: POST the body through the guard's dispatcher, no redirects, a hard deadline
 * covering DNS, connect, TLS, headers and the first bytes of the body, and at most
 * `maxSnippetBytes` of the response read. Never throws for network conditions: the outcome is
 * in the result, ready for classifyAttempt().
 */

export const DEFAULT_DELIVERY_TIMEOUT_MS = 15_000;
export const DEFAULT_SNIPPET_BYTES = 1024;

export interface DeliverInput {
  readonly url: string;
  /** The exact body bytes (the ones that were signed). */
  readonly body: string | Uint8Array;
  readonly headers: Readonly<Record<string, string>>;
  readonly guard: SsrfGuard;
  /** Default 15 s. */
  readonly timeoutMs?: number;
  /** Default 1024. */
  readonly maxSnippetBytes?: number;
  /** Aborts the attempt early (e.g. shutdown); reported as error code "aborted". */
  readonly signal?: AbortSignal;
}

export type DeliveryErrorCode =
  | 'timeout'
  | 'aborted'
  | 'invalid_url'
  | 'destination_blocked'
  | 'dns_error'
  | 'connection_refused'
  | 'connection_error'
  | 'tls_error';

export interface DeliveryResult {
  /** HTTP status, or null when no response arrived. */
  readonly status: number | null;
  /** Milliseconds from the start of the attempt to the response head (or to the failure). */
  readonly latencyMs: number;
  /** The first bytes of the response body as UTF-8 (possibly cut mid-character). */
  readonly responseSnippet: string;
  /** Retry-After header, when present (429/503 handling). */
  readonly retryAfter?: string;
  /** Location header of a 3xx (reported, never followed). */
  readonly location?: string;
  readonly error?: { readonly code: DeliveryErrorCode; readonly message: string };
}

function header(headers: Record<string, string | string[] | undefined>, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

function describeError(err: unknown): { code: DeliveryErrorCode; message: string } {
  if (err instanceof WebhookDestinationError) {
    return { code: err.code === 'dns_resolution_failed' ? 'dns_error' : err.code === 'destination_blocked' ? 'destination_blocked' : 'invalid_url', message: err.message };
  }
  const e = err as NodeJS.ErrnoException & { cause?: unknown };
  const cause = e?.cause as NodeJS.ErrnoException | undefined;
  if (cause instanceof WebhookDestinationError) return describeError(cause);
  const code = e?.code ?? cause?.code ?? '';
  const message = e?.message ?? String(err);
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'ENODATA') return { code: 'dns_error', message };
  if (code === 'ECONNREFUSED') return { code: 'connection_refused', message };
  if (code === 'UND_ERR_CONNECT_TIMEOUT' || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') {
    return { code: 'timeout', message };
  }
  if (/^ERR_TLS|^ERR_SSL|CERT|SELF_SIGNED|UNABLE_TO_VERIFY/.test(code)) return { code: 'tls_error', message };
  return { code: 'connection_error', message: code ? `${code}: ${message}` : message };
}

export async function deliver(input: DeliverInput): Promise<DeliveryResult> {
  const timeoutMs = input.timeoutMs ?? DEFAULT_DELIVERY_TIMEOUT_MS;
  const maxSnippet = input.maxSnippetBytes ?? DEFAULT_SNIPPET_BYTES;
  const started = performance.now();
  const elapsed = (): number => Math.round(performance.now() - started);

  try {
    input.guard.validateUrl(input.url);
  } catch (err) {
    return { status: null, latencyMs: 0, responseSnippet: '', error: describeError(err) };
  }

  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort(new Error(`no response within ${timeoutMs} ms`));
  }, timeoutMs);
  const onOuterAbort = (): void => controller.abort(input.signal?.reason);
  input.signal?.addEventListener('abort', onOuterAbort, { once: true });
  if (input.signal?.aborted) controller.abort(input.signal.reason);

  let status: number | null = null;
  let latencyMs = 0;
  const chunks: Buffer[] = [];
  let extra: { retryAfter?: string; location?: string } = {};
  try {
    const res = await request(input.url, {
      method: 'POST',
      dispatcher: input.guard.dispatcher,
      headers: { ...input.headers },
      body: typeof input.body === 'string' ? input.body : Buffer.from(input.body),
      maxRedirections: 0,
      signal: controller.signal,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    });
    status = res.statusCode;
    latencyMs = elapsed();
    const retryAfter = header(res.headers, 'retry-after');
    const location = status >= 300 && status < 400 ? header(res.headers, 'location') : undefined;
    extra = { ...(retryAfter !== undefined ? { retryAfter } : {}), ...(location !== undefined ? { location } : {}) };
    let got = 0;
    try {
      if (maxSnippet > 0) {
        for await (const chunk of res.body) {
          const buf = chunk as Buffer;
          const take = Math.min(buf.length, maxSnippet - got);
          chunks.push(buf.subarray(0, take));
          got += take;
          if (got >= maxSnippet) break; // leaving the loop destroys the rest of the body
        }
      } else res.body.destroy();
    } catch {
      // The status is what counts; a body cut short (deadline, reset) keeps what was read.
    }
    return { status, latencyMs, responseSnippet: Buffer.concat(chunks).toString('utf8'), ...extra };
  } catch (err) {
    const error = timedOut
      ? { code: 'timeout' as const, message: `no response within ${timeoutMs} ms` }
      : controller.signal.aborted
        ? { code: 'aborted' as const, message: 'attempt aborted' }
        : describeError(err);
    return { status, latencyMs: status === null ? elapsed() : latencyMs, responseSnippet: Buffer.concat(chunks).toString('utf8'), ...extra, error };
  } finally {
    clearTimeout(timer);
    input.signal?.removeEventListener('abort', onOuterAbort);
  }
}
