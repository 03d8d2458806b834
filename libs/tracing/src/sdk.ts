// The OpenTelemetry SDK of one process: started only when an OTLP endpoint is configured.
// Without one, the SDK is not even loaded (its modules cost a process ~100 ms and ~7 MB): spans
// are the API's no-op spans, propagation its no-op propagator, and no exporter, processor or
// timer exists.
import { diag, DiagLogLevel, propagation, trace, type DiagLogger } from '@opentelemetry/api';
import { ATTR_SERVICE_NAME } from './semconv.ts';

/** config.tracing (libs/config). */
export interface TracingSettings {
  /** Where spans are posted (OTLP/HTTP, JSON); null: tracing off. */
  tracesUrl: string | null;
  /** How long finished spans wait to be exported together. */
  scheduleDelayMs: number;
}

export interface Tracing {
  enabled: boolean;
  /** Exports the spans still buffered and stops the SDK (graceful shutdown). */
  shutdown(): Promise<void>;
}

const OFF: Tracing = { enabled: false, shutdown: async () => undefined };
let running: Tracing | null = null;

/** The SDK's own complaints (an export refused, the collector unreachable), as one line each: the message, never the error object. */
function diagnostics(report: (message: string) => void): DiagLogger {
  const say = (message: string) => report(`tracing: ${message}`);
  const quiet = () => undefined;
  return { error: say, warn: say, info: quiet, debug: quiet, verbose: quiet };
}

/**
 * Starts tracing for the process, once (a second call gets the first one's handle): spans of
 * `service` are batched and posted to `settings.tracesUrl`; W3C trace context is what
 * propagation reads and writes. `report` hears the SDK's warnings and errors.
 */
export async function startTracing(service: string, settings: TracingSettings, report: (message: string) => void = () => undefined): Promise<Tracing> {
  if (!settings.tracesUrl) return OFF;
  if (running) return running;
  const [{ W3CTraceContextPropagator }, { OTLPTraceExporter }, { defaultResource, resourceFromAttributes }, { BatchSpanProcessor }, { NodeTracerProvider }] = await Promise.all([
    import('@opentelemetry/core'),
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/sdk-trace-base'),
    import('@opentelemetry/sdk-trace-node'),
  ]);
  if (running) return running;
  const provider = new NodeTracerProvider({
    resource: defaultResource().merge(resourceFromAttributes({ [ATTR_SERVICE_NAME]: service })),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: settings.tracesUrl }), { scheduledDelayMillis: settings.scheduleDelayMs })],
  });
  diag.setLogger(diagnostics(report), { logLevel: DiagLogLevel.WARN, suppressOverrideMessage: true });
  // Trace context only (no baggage: it would carry whatever a caller put in it through every
  // hop). No context manager: every span is given its parent explicitly (spans.ts).
  provider.register({ propagator: new W3CTraceContextPropagator(), contextManager: null });
  const handle: Tracing = {
    enabled: true,
    async shutdown() {
      if (running !== handle) return;
      running = null;
      await provider.shutdown();
      trace.disable();
      propagation.disable();
      diag.disable();
    },
  };
  running = handle;
  return handle;
}
