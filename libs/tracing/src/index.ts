// OpenTelemetry traces across the gateway's hops (docs/architecture.md "Traces"): the SDK of a
// process, W3C trace context in Kafka record headers and HTTP headers, and span helpers that
// take their parent explicitly.
export { startTracing, type Tracing, type TracingSettings } from './sdk.ts';
export {
  extractTraceContext,
  fromTraceParent,
  headerGetter,
  headerSetter,
  traceHeaders,
  traceParentOf,
  withTraceHeaders,
  type HeaderCarrier,
  type HeaderValue,
  type TraceContext,
} from './carrier.ts';
export { annotateSpan, endSpan, errorType, failSpan, inSpan, SpanKind, spanOf, startSpan, type Attributes, type Span, type SpanSpec, type StartedSpan } from './spans.ts';
export { inProducerSpan, startConsumerSpan, type ConsumedMessage } from './messaging.ts';
export { httpClientAttributes, httpSpanName } from './http.ts';
export * from './semconv.ts';
