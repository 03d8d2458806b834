import { timingSafeEqual } from 'node:crypto';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyReply } from 'fastify';
import type { Logger, ServiceMetrics, Readiness } from '@gw/observability';
import { opsPlugin } from '@gw/observability';
import { errorHandlerPlugin, toApiError } from './plugins/error-handler.ts';
import { openapiPlugin } from './plugins/openapi.ts';
import { requestTracePlugin } from './plugins/request-trace.ts';
import { dashboardPlugin, securityHeadersPlugin, viewsPlugin, type DashboardDeps } from '@gw/dashboard';
import { sendMessageRoutes, type SendMessageDeps } from './send-message/route.ts';
import { pbxRoutes, type PbxDeps } from './pbx/route.ts';
import { instanceEventsRoutes } from './instance-events/route.ts';

export interface AppDeps {
  logger: Logger | false;
  metrics: ServiceMetrics;
  readiness: Readiness;
  publicBaseUrl: string;
  bodyLimitBytes: number;
  /** A request must arrive whole within this long; a connection is closed after it has been silent for `idleTimeoutMs`. */
  requestTimeoutMs: number;
  idleTimeoutMs: number;
  /** The instance manager webhook's own body limit (config api.instanceEventBodyLimitBytes). */
  instanceEventBodyLimitBytes?: number;
  /** The instance manager webhook's limit per instance, and whether its older token-in-path form is taken (config api.instanceEvent*). */
  instanceEvents?: { rate?: { perSecond: number; burst: number }; pathTokens?: 'accept' | 'refuse' };
  send: SendMessageDeps;
  pbx: PbxDeps;
  /**
   * The ingress's addresses or CIDR ranges whose X-Forwarded-For names the client (config
   * api.trustedProxies); none by default: the socket's address is the client's, so a client
   * cannot choose its own address for the per-address limits.
   */
  trustedProxies?: string[];
  /** When set, GET /metrics answers only `Authorization: Bearer <token>` (config api.metricsToken). */
  metricsToken?: string;
  /** Production (config api.metricsTokenRequired): without a metricsToken the app refuses to build. */
  metricsTokenRequired?: boolean;
  /** The dashboard's own dependencies (its public base URL and send path are the app's). */
  dashboard: Omit<DashboardDeps, 'publicBaseUrl' | 'send'>;
}

/** The public HTTP API: one plugin per concern, one error handler. */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  if (deps.metricsTokenRequired && !deps.metricsToken) throw new MetricsTokenMissing();
  const app = Fastify({
    // The shared pino logger; typed as fastify's base logger so plugins see one instance type.
    ...(deps.logger ? { loggerInstance: deps.logger as FastifyBaseLogger } : { logger: false }),
    // One log line per send is written by the handler, with its correlation id; no access log.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: deps.bodyLimitBytes,
    // A client that trickles its request (slowloris) is answered 408 and cut off; a connection
    // silent for longer than any answer can take (the send deadline) is closed.
    requestTimeout: deps.requestTimeoutMs,
    connectionTimeout: deps.idleTimeoutMs,
    // Given to Node's server at creation too: set afterwards (as fastify does), the limit is never
    // enforced while the headers' own 60 s limit is higher. Checked every second (Node: every 30 s).
    http: { requestTimeout: deps.requestTimeoutMs, headersTimeout: deps.requestTimeoutMs, connectionsCheckingInterval: Math.min(1_000, deps.requestTimeoutMs) },
    return503OnClosing: true,
    trustProxy: deps.trustedProxies && deps.trustedProxies.length > 0 ? deps.trustedProxies : false,
    // Errors raised before routing (a malformed percent-encoding, an over-long path parameter)
    // are answered as an ApiError too, never with fastify's own body (which echoes the path).
    frameworkErrors: (error, _request, reply) => {
      const apiError = toApiError(error);
      void (reply as unknown as FastifyReply).code(apiError.status).send(apiError.toBody());
    },
    ajv: { customOptions: { allErrors: true, removeAdditional: false, coerceTypes: false, useDefaults: false } },
  });
  // Only JSON is parsed; any other media type is refused with 415 before the body is read.
  app.removeContentTypeParser('text/plain');
  await app.register(errorHandlerPlugin);
  // Before every route: each request gets its server span (request.trace).
  await app.register(requestTracePlugin);
  await app.register(openapiPlugin, { serverUrl: deps.publicBaseUrl });
  if (deps.metricsToken) {
    // Not public on the API's port once a token is configured: a scraper sends it (Prometheus:
    // `authorization: { credentials: … }`); anyone else gets a 404 as for an unknown path.
    const expected = Buffer.from(`Bearer ${deps.metricsToken}`);
    app.addHook('onRequest', async (request, reply) => {
      // The matched route, not the raw URL: a percent-encoded spelling (`/%6detrics`) reaches the
      // same route and must not pass without the token.
      if (request.routeOptions.url !== '/metrics') return;
      const given = Buffer.from(String(request.headers.authorization ?? ''));
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) return reply.code(404).send({ error: { code: 'not_found', message: 'Not found.' } });
    });
  }
  await app.register(opsPlugin, { metrics: deps.metrics, readiness: deps.readiness });
  await app.register(securityHeadersPlugin, { https: deps.publicBaseUrl.startsWith('https:') });
  await app.register(viewsPlugin);
  // Its own scope: the dashboard's pages and forms (cookies, sessions, CSRF, form bodies), and GET /.
  await app.register(dashboardPlugin, { ...deps.dashboard, publicBaseUrl: deps.publicBaseUrl, send: deps.send });
  await app.register(sendMessageRoutes, deps.send);
  // Its own scope: the PBX route reads bodies raw (for the HMAC) with its own size limit.
  await app.register(pbxRoutes, deps.pbx);
  // Its own scope: instance manager webhooks, read raw (digest for dedupe), authenticated per instance.
  await app.register(instanceEventsRoutes, { pool: deps.pbx.pool, kafka: deps.pbx.kafka, codec: deps.pbx.codec, bodyLimitBytes: deps.instanceEventBodyLimitBytes, ...deps.instanceEvents });
  return app as unknown as FastifyInstance;
}

/**
 * Production without API_METRICS_TOKEN: the API's port is the public one (behind the Ingress), and
 * an open /metrics would show anyone the gateway's traffic. Like a missing GATEWAY_SECRET_KEY, the
 * process stops at start instead (docs/decisions.md "Dashboard hardening (issue 25)").
 */
export class MetricsTokenMissing extends Error {
  override readonly name = 'MetricsTokenMissing';
  constructor() {
    super(
      'API_METRICS_TOKEN is not set. With NODE_ENV=production the API refuses to start without it, because /metrics is served on the ' +
        'public API port. Generate one with `openssl rand -base64 32`, set it for the api and give the same token to the Prometheus ' +
        'job that scrapes it (deploy/k8s/README.md). Local runs and tests (NODE_ENV not production) keep /metrics open.',
    );
  }
}
