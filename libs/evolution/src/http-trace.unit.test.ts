import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fromTraceParent, SpanKind } from '@gw/tracing';
import { recordSpans, type RecordedSpans } from '@gw/tracing/testing';
import { sendText } from './send-text.ts';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const SPAN_ID = '00f067aa0ba902b7';

// A stand-in manager on a local port that answers sendText and keeps the headers it was sent.
let server: Server;
let managerUrl: string;
const seen: IncomingHttpHeaders[] = [];
let recorded: RecordedSpans;

beforeAll(async () => {
  recorded = recordSpans();
  server = createServer((request, response) => {
    seen.push(request.headers);
    request.resume();
    request.on('end', () => {
      response.writeHead(201, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ key: { id: 'WAMID1' }, status: 'PENDING' }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  managerUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await recorded.stop();
});

describe('the instance manager call in a trace', () => {
  it('is a client span of the send, and the manager gets that span as traceparent', async () => {
    const parent = fromTraceParent(`00-${TRACE_ID}-${SPAN_ID}-01`);
    const result = await sendText({ managerUrl, apiKey: 'k', instance: 'shop-1', phone: '+14155552671', text: 'Your order shipped', timeoutMs: 2_000, trace: parent });
    expect(result.kind).toBe('accepted');

    const span = recorded.finished().at(-1)!;
    expect(span.kind).toBe(SpanKind.CLIENT);
    expect(span.name).toBe('POST /message/sendText/{instance}');
    expect(span.spanContext().traceId).toBe(TRACE_ID);
    expect(span.parentSpanContext?.spanId).toBe(SPAN_ID);
    expect(span.attributes).toMatchObject({ 'http.request.method': 'POST', 'server.address': '127.0.0.1', 'http.response.status_code': 201, 'url.template': '/message/sendText/{instance}' });
    // Neither the instance's path, the recipient nor the text is in the span.
    expect(JSON.stringify(span.attributes)).not.toMatch(/shop-1|4155552671|shipped/);

    expect(seen.at(-1)!.traceparent).toBe(`00-${TRACE_ID}-${span.spanContext().spanId}-01`);
  });
});
