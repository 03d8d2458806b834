import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SpanKind, traceParentOf } from '@gw/tracing';
import { recordSpans, type RecordedSpans } from '@gw/tracing/testing';
import { requestTracePlugin } from './request-trace.ts';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const SPAN_ID = '00f067aa0ba902b7';
const SECRET_TOKEN = 'tok_9f8e7d6c5b4a';

let app: FastifyInstance;
let recorded: RecordedSpans;
const handed: Array<string | null> = [];

beforeAll(async () => {
  recorded = recordSpans();
  app = Fastify();
  await app.register(requestTracePlugin);
  app.post('/integrations/instances/:id/events/:token', async (request) => {
    handed.push(request.trace ? traceParentOf(request.trace) : null);
    return { ok: true };
  });
  app.get('/boom', async () => {
    throw new Error('down');
  });
  app.get('/healthz', async () => ({ status: 'ok' }));
  await app.ready();
});
afterAll(async () => {
  await app.close();
  await recorded.stop();
});

const lastSpan = () => recorded.finished().at(-1)!;

describe('request spans of the API', () => {
  it('is a server span named by the route template, continuing the caller\'s traceparent, and handed to the handler', async () => {
    const response = await app.inject({ method: 'POST', url: `/integrations/instances/ins_1/events/${SECRET_TOKEN}`, headers: { traceparent: `00-${TRACE_ID}-${SPAN_ID}-01` }, payload: {} });
    expect(response.statusCode).toBe(200);
    const span = lastSpan();
    expect(span.kind).toBe(SpanKind.SERVER);
    expect(span.name).toBe('POST /integrations/instances/:id/events/:token');
    expect(span.spanContext().traceId).toBe(TRACE_ID);
    expect(span.parentSpanContext?.spanId).toBe(SPAN_ID);
    expect(span.attributes).toMatchObject({ 'http.request.method': 'POST', 'http.route': '/integrations/instances/:id/events/:token', 'http.response.status_code': 200 });
    expect(JSON.stringify([span.name, span.attributes])).not.toContain(SECRET_TOKEN);
    // What the handler appends continues this span.
    expect(handed.at(-1)).toBe(`00-${TRACE_ID}-${span.spanContext().spanId}-01`);
  });

  it('starts a new trace for a malformed traceparent, and still answers', async () => {
    const response = await app.inject({ method: 'POST', url: '/integrations/instances/ins_1/events/x', headers: { traceparent: '00-zz-yy-01' }, payload: {} });
    expect(response.statusCode).toBe(200);
    expect(lastSpan().parentSpanContext).toBeUndefined();
  });

  it('fails the span of a 5xx answer, with the status as the error type', async () => {
    expect((await app.inject({ method: 'GET', url: '/boom' })).statusCode).toBe(500);
    expect(lastSpan().status.code).toBe(2); // SpanStatusCode.ERROR
    expect(lastSpan().attributes['error.type']).toBe('500');
  });

  it('does not trace the probes', async () => {
    const before = recorded.finished().length;
    expect((await app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    expect(recorded.finished().length).toBe(before);
  });
});
