import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import {
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_HTTP_ROUTE,
  ATTR_URL_SCHEME,
  endSpan,
  extractTraceContext,
  failSpan,
  httpSpanName,
  SpanKind,
  spanOf,
  startSpan,
  type TraceContext,
} from '@gw/tracing';

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * The request's server span (docs/architecture.md "Traces"): what a handler gives to the
     * records it appends (OutgoingRecord.trace), so the stages continue this trace. Null for the
     * probes, which are not traced.
     */
    trace: TraceContext | null;
  }
}

// Probed every few seconds: a trace each would drown the ones that matter.
const UNTRACED = new Set(['/healthz', '/readyz', '/metrics']);

/**
 * A server span per request, named by its route's template (`POST /api/send-message`), never by
 * its path (paths carry tokens and ids). A traceparent the caller sends is continued (a proxy
 * or a customer tracing their own calls); a malformed one starts a new trace.
 */
export const requestTracePlugin = fp(
  async (app: FastifyInstance) => {
    app.decorateRequest('trace', null);
    app.addHook('onRequest', async (request) => {
      const route = request.routeOptions.url;
      if (route !== undefined && UNTRACED.has(route)) return;
      const attributes = { [ATTR_HTTP_REQUEST_METHOD]: request.method, [ATTR_URL_SCHEME]: request.protocol, ...(route !== undefined ? { [ATTR_HTTP_ROUTE]: route } : {}) };
      request.trace = startSpan('@gw/api', httpSpanName(request.method, route), { kind: SpanKind.SERVER, attributes }, extractTraceContext(request.headers)).trace;
    });
    const finish = (trace: TraceContext | null, status: number | null) => {
      const span = trace ? spanOf(trace) : undefined;
      // Not recording: no span, or one ended already (a request aborted, then answered).
      if (!span?.isRecording()) return;
      if (status === null) failSpan(span, 'aborted');
      else {
        span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, status);
        // Server spans fail on 5xx only: a 4xx is the client's error, answered as it should be.
        if (status >= 500) failSpan(span, String(status));
      }
      endSpan(span);
    };
    app.addHook('onResponse', async (request, reply) => finish(request.trace, reply.statusCode));
    app.addHook('onRequestAbort', async (request) => finish(request.trace, null));
  },
  { name: 'request-trace' },
);
