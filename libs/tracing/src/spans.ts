// Starting and ending spans with the parent given explicitly. Nothing here reads an "active"
// context: whoever starts a span says what it continues (a record's context, a request's, a
// row's traceparent), and gets back the context its own children and outputs continue. No
// context manager is installed (sdk.ts), so there is no hidden state to get wrong across awaits.
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Span } from '@opentelemetry/api';
import type { TraceContext } from './carrier.ts';
import { ATTR_ERROR_TYPE } from './semconv.ts';

export { SpanKind };
export type { Attributes, Span };

/** A started span, and the context that continues it (for child spans and the records it causes). */
export interface StartedSpan {
  span: Span;
  trace: TraceContext;
}

export interface SpanSpec {
  kind: SpanKind;
  attributes?: Attributes;
}

/**
 * Starts a span as a child of `parent` (a new trace when it carries none). With tracing off the
 * span is the API's no-op span and `trace` is `parent` itself: nothing is allocated for it.
 */
export function startSpan(scope: string, name: string, spec: SpanSpec, parent: TraceContext = ROOT_CONTEXT): StartedSpan {
  // The API's tracer follows whichever provider is registered now (the SDK's, or none: its no-op).
  const span = trace.getTracer(scope).startSpan(name, { kind: spec.kind, attributes: spec.attributes }, parent);
  // A span that is not sampled still has a valid context, which its children must continue.
  return { span, trace: trace.isSpanContextValid(span.spanContext()) ? trace.setSpan(parent, span) : parent };
}

/** An error's class or code, never its message (a message may quote the data it failed on). */
export function errorType(error: unknown): string {
  if (typeof error !== 'object' || error === null) return typeof error;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && code !== '') return code;
  const name = (error as { name?: unknown }).name;
  return typeof name === 'string' && name !== '' ? name : (error.constructor?.name ?? 'Error');
}

/** Marks a span failed with an error type (an error's class or code, an HTTP status, a failure reason). */
export function failSpan(span: Span, type: string): void {
  span.setAttribute(ATTR_ERROR_TYPE, type);
  span.setStatus({ code: SpanStatusCode.ERROR });
}

/** Ends a span; failed when an error is given. */
export function endSpan(span: Span, error?: unknown): void {
  if (error !== undefined) failSpan(span, errorType(error));
  span.end();
}

/** Runs `work` in a span that ends with it (failed if it throws, and the error goes on). */
export async function inSpan<T>(scope: string, name: string, spec: SpanSpec, parent: TraceContext | undefined, work: (started: StartedSpan) => Promise<T>): Promise<T> {
  const started = startSpan(scope, name, spec, parent);
  let result: T;
  try {
    result = await work(started);
  } catch (error) {
    endSpan(started.span, error);
    throw error;
  }
  started.span.end();
  return result;
}

/** The span a context continues (undefined: none, e.g. tracing off). */
export function spanOf(context: TraceContext): Span | undefined {
  return trace.getSpan(context);
}

/** Adds attributes to the span `trace` continues (what a handler learnt: a decision, a result). */
export function annotateSpan(context: TraceContext | undefined, attributes: Attributes): void {
  if (context) trace.getSpan(context)?.setAttributes(attributes);
}
