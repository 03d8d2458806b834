// One autocannon run against a local target, summarised. Every request gets its own body.
import autocannon from 'autocannon';

export interface LoadTarget {
  name: string;
  /** Base URL; the bench only ever targets 127.0.0.1. */
  url: string;
  path: string;
  headers: Record<string, string>;
  /** The JSON body of request number n (distinct per request). */
  body(n: number): unknown;
  /** Optional classification of every answer, e.g. "sent" vs "queued", or a refusal's code. */
  classify?(status: number, body: string): string | null;
  /** Per-request headers on top of `headers` (e.g. each request as one of several customers). */
  headersFor?(n: number): Record<string, string>;
  /** Per-request path instead of `path` (e.g. each request to one of several PBX integrations). */
  pathFor?(n: number): string;
}

export interface LoadOptions {
  durationS: number;
  connections: number;
  timeoutS: number;
}

export interface LoadResult {
  name: string;
  durationS: number;
  connections: number;
  requests: number;
  ok: number;
  /** Mean requests per second over the run (autocannon's per-second samples; all statuses). */
  rpsMean: number;
  /** 2xx answers per second. */
  okPerS: number;
  latencyMs: { mean: number; p50: number; p90: number; p99: number; max: number };
  non2xx: number;
  errors: number;
  timeouts: number;
  statusCodes: Record<string, number>;
  /** Answers by `classify` (2xx and the rest alike). */
  classes: Record<string, number>;
  /** A few non-2xx bodies, to tell what went wrong. */
  sampleFailures: string[];
}

let counter = 0;

/**
 * Waits until the target answers one request 2xx. A pipeline's consumers may still be joining
 * their groups when its server listens (slowly after a broker restart: "the coordinator is
 * loading"), and a short warm-up would then end with no answer at all: this measures the start,
 * the warm-up measures the target. Throws with the last answer after `timeoutMs`.
 */
export async function untilAnswering(target: LoadTarget, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = 'no answer';
  while (Date.now() < deadline) {
    const n = counter++;
    try {
      const response = await fetch(new URL(target.pathFor?.(n) ?? target.path, target.url), {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...target.headers, ...target.headersFor?.(n) },
        body: JSON.stringify(target.body(n)),
        signal: AbortSignal.timeout(Math.max(1, deadline - Date.now())),
      });
      const body = await response.text();
      if (response.ok) return;
      last = `${response.status} ${body.slice(0, 300)}`;
    } catch (error) {
      last = error instanceof Error ? error.message : String(error);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${target.name}: no 2xx within ${timeoutMs} ms of starting; last: ${last}`);
}

export async function runLoad(target: LoadTarget, options: LoadOptions): Promise<LoadResult> {
  const classes: Record<string, number> = {};
  const sampleFailures: string[] = [];
  const url = new URL(target.url);
  if (url.hostname !== '127.0.0.1') throw new Error(`bench targets must be on 127.0.0.1, got ${target.url}`);

  const instance = autocannon({
    url: target.url,
    connections: options.connections,
    duration: options.durationS,
    timeout: options.timeoutS,
    requests: [
      {
        method: 'POST',
        path: target.path,
        headers: { 'content-type': 'application/json', ...target.headers },
        // Called for every request: a fresh body each time.
        setupRequest: (request) => {
          const n = counter++;
          const headers = target.headersFor ? { ...request.headers, ...target.headersFor(n) } : request.headers;
          return { ...request, ...(target.pathFor ? { path: target.pathFor(n) } : {}), headers, body: JSON.stringify(target.body(n)) };
        },
        onResponse: (status, body) => {
          const kind = target.classify?.(status, body);
          if (kind) classes[kind] = (classes[kind] ?? 0) + 1;
          if ((status < 200 || status >= 300) && sampleFailures.length < 3) sampleFailures.push(`${status} ${String(body).slice(0, 300)}`);
        },
      },
    ],
  });
  const result = await instance;
  const statusCodes: Record<string, number> = {};
  for (const [code, stat] of Object.entries(result.statusCodeStats ?? {})) statusCodes[code] = Number(stat.count);
  const ok = Object.entries(statusCodes)
    .filter(([code]) => code.startsWith('2'))
    .reduce((total, [, count]) => total + count, 0);
  const requests = Object.values(statusCodes).reduce((a, b) => a + b, 0);
  return {
    name: target.name,
    durationS: result.duration,
    connections: options.connections,
    requests,
    ok,
    rpsMean: result.requests.average,
    okPerS: result.duration > 0 ? ok / result.duration : 0,
    latencyMs: {
      mean: result.latency.average,
      p50: result.latency.p50,
      p90: result.latency.p90,
      p99: result.latency.p99,
      max: result.latency.max,
    },
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    statusCodes,
    classes,
    sampleFailures,
  };
}
