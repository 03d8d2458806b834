// For tests: an SDK that keeps finished spans in memory, with the W3C propagator, registered as
// the process's tracing for the test's duration.
import { propagation, trace } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';

export interface RecordedSpans {
  /** The spans ended so far. */
  finished(): ReadableSpan[];
  /** Tracing off again (the API's no-ops). */
  stop(): Promise<void>;
}

export function recordSpans(): RecordedSpans {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  trace.setGlobalTracerProvider(provider);
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  return {
    finished: () => exporter.getFinishedSpans(),
    async stop() {
      await provider.shutdown();
      trace.disable();
      propagation.disable();
    },
  };
}

export type { ReadableSpan };
