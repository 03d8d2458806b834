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
