// W3C trace context (traceparent, tracestate) in and out of message headers: Kafka record headers
// and HTTP headers alike. Goes through the OpenTelemetry propagation API, so with tracing off (no
// SDK, the API's no-op propagator) nothing is read or written.
import { propagation, ROOT_CONTEXT, type Context, type TextMapGetter, type TextMapSetter } from '@opentelemetry/api';

/** The context a record or request carries, and the one a span continues; see spans.ts. */
export type TraceContext = Context;

/**
 * Headers as they come: kafkajs gives Buffers (or arrays of them when a name repeats), the
 * runtime's decoded records and Node's HTTP headers give strings (or arrays of them).
 */
export type HeaderValue = string | Buffer | ReadonlyArray<string | Buffer> | undefined;
export type HeaderCarrier = Readonly<Record<string, HeaderValue>>;

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** A header's text; undefined for bytes that are not UTF-8 (they carry no trace context). */
function text(value: string | Buffer): string | undefined {
  if (typeof value === 'string') return value;
  try {
    return utf8.decode(value);
  } catch {
    return undefined;
  }
}

export const headerGetter: TextMapGetter<HeaderCarrier> = {
  keys: (carrier) => Object.keys(carrier),
  get(carrier, key) {
    const value = carrier[key];
    if (value === undefined) return undefined;
    if (typeof value === 'string' || Buffer.isBuffer(value)) return text(value);
    const texts = (value as ReadonlyArray<string | Buffer>).map(text).filter((t): t is string => t !== undefined);
    return texts.length > 0 ? texts : undefined;
  },
};

export const headerSetter: TextMapSetter<Record<string, string>> = {
  set(carrier, key, value) {
    carrier[key] = value;
  },
};

/**
 * The trace context the headers carry, or `base` when they carry none. A malformed traceparent,
 * a header that is not UTF-8, anything the propagator cannot read, is ignored: the work then
 * starts a new trace, and the record or request itself is never refused for it.
 */
export function extractTraceContext(headers: HeaderCarrier | undefined, base: TraceContext = ROOT_CONTEXT): TraceContext {
  if (!headers) return base;
  try {
    return propagation.extract(base, headers, headerGetter);
  } catch {
    return base;
  }
}

/** The headers that carry `trace` (traceparent and, when set, tracestate); empty when tracing is off. */
export function traceHeaders(trace: TraceContext): Record<string, string> {
  const carrier: Record<string, string> = {};
  propagation.inject(trace, carrier, headerSetter);
  return carrier;
}

/** `headers` with the trace context of `trace` added; the very same object when there is none to add. */
export function withTraceHeaders<H extends Record<string, string> | undefined>(headers: H, trace: TraceContext): H | Record<string, string> {
  const added = traceHeaders(trace);
  return Object.keys(added).length > 0 ? { ...headers, ...added } : headers;
}

/** The traceparent of `trace`, to keep with work that waits in Postgres (null: none). */
export function traceParentOf(trace: TraceContext): string | null {
  return traceHeaders(trace).traceparent ?? null;
}

/** The context a kept traceparent stands for (ROOT_CONTEXT for null or a malformed value). */
export function fromTraceParent(traceParent: string | null | undefined): TraceContext {
  return traceParent ? extractTraceContext({ traceparent: traceParent }) : ROOT_CONTEXT;
}
