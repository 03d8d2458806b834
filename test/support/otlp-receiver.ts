import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';

// A local OTLP/HTTP trace receiver: what a collector is to the services, reduced to keeping the
// spans it is sent. It reads the JSON encoding, which @opentelemetry/exporter-trace-otlp-http
// sends (Content-Type application/json; ids in hex, times as nanosecond strings, attributes as
// {key, value: {stringValue | intValue | ...}}), gzipped or not.

/** One received span, flattened: its service (resource service.name) and attributes as plain values. */
export interface ReceivedSpan {
  service: string;
  scope: string;
  traceId: string;
  spanId: string;
  /** '' for a root span. */
  parentSpanId: string;
  name: string;
  /** OTLP SpanKind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  attributes: Record<string, unknown>;
  /** OTLP status code: 0 unset, 1 ok, 2 error. */
  status: number;
  /** The span's events' names and attributes, for the privacy checks. */
  events: Array<{ name: string; attributes: Record<string, unknown> }>;
}

export const SPAN_KIND = { internal: 1, server: 2, client: 3, producer: 4, consumer: 5 } as const;

type AnyValue = { stringValue?: string; intValue?: string | number; doubleValue?: number; boolValue?: boolean; arrayValue?: { values?: AnyValue[] }; kvlistValue?: { values?: KeyValue[] }; bytesValue?: string };
type KeyValue = { key: string; value?: AnyValue };

function plain(value: AnyValue | undefined): unknown {
  if (!value) return null;
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.boolValue !== undefined) return value.boolValue;
  if (value.arrayValue) return (value.arrayValue.values ?? []).map(plain);
  if (value.kvlistValue) return attributes(value.kvlistValue.values);
  if (value.bytesValue !== undefined) return value.bytesValue;
  return null;
}

function attributes(list: KeyValue[] | undefined): Record<string, unknown> {
  return Object.fromEntries((list ?? []).map((kv) => [kv.key, plain(kv.value)]));
}

interface ExportRequest {
  resourceSpans?: Array<{
    resource?: { attributes?: KeyValue[] };
    scopeSpans?: Array<{
      scope?: { name?: string };
      spans?: Array<{ traceId: string; spanId: string; parentSpanId?: string; name: string; kind?: number; attributes?: KeyValue[]; status?: { code?: number }; events?: Array<{ name: string; attributes?: KeyValue[] }> }>;
    }>;
  }>;
}

export function spansOf(request: ExportRequest): ReceivedSpan[] {
  return (request.resourceSpans ?? []).flatMap((rs) => {
    const service = String(attributes(rs.resource?.attributes)['service.name'] ?? '');
    return (rs.scopeSpans ?? []).flatMap((ss) =>
      (ss.spans ?? []).map((s) => ({
        service,
        scope: ss.scope?.name ?? '',
        traceId: s.traceId,
        spanId: s.spanId,
        parentSpanId: s.parentSpanId ?? '',
        name: s.name,
        kind: s.kind ?? 0,
        attributes: attributes(s.attributes),
        status: s.status?.code ?? 0,
        events: (s.events ?? []).map((e) => ({ name: e.name, attributes: attributes(e.attributes) })),
      })),
    );
  });
}

export interface OtlpReceiver {
  /** The base endpoint (OTEL_EXPORTER_OTLP_ENDPOINT): the exporter posts to `${url}/v1/traces`. */
  url: string;
  spans: ReceivedSpan[];
  /** Export requests that were not an OTLP JSON trace export (a wrong path, encoding or body). */
  refused: string[];
  close(): Promise<void>;
}

function body(request: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks)));
    request.on('error', reject);
  });
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const refused: string[] = [];
  const server: Server = createServer((request, response) => {
    void body(request).then((raw) => {
      const type = request.headers['content-type'] ?? '';
      if (request.method !== 'POST' || request.url !== '/v1/traces' || !type.startsWith('application/json')) {
        refused.push(`${request.method} ${request.url} ${type}`);
        response.writeHead(404).end();
        return;
      }
      try {
        const text = (request.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw).toString('utf8');
        spans.push(...spansOf(JSON.parse(text) as ExportRequest));
      } catch (error) {
        refused.push(`unreadable export: ${(error as Error).message}`);
        response.writeHead(400).end();
        return;
      }
      // An ExportTraceServiceResponse with everything accepted.
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans,
    refused,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
