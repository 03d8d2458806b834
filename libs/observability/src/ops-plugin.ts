import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import type { ServiceMetrics } from './metrics.ts';

export interface Readiness {
  /** Returns the names of dependencies that are not ready; empty means ready. */
  check(): Promise<string[]> | string[];
}

export interface OpsPluginOptions {
  metrics: ServiceMetrics;
  readiness: Readiness;
}

/** /healthz (process alive), /readyz (dependencies ready), /metrics, and an HTTP latency histogram. */
export const opsPlugin = fp<OpsPluginOptions>(
  async (app: FastifyInstance, { metrics, readiness }) => {
    const startTimes = new WeakMap<object, bigint>();
    app.addHook('onRequest', async (request) => {
      startTimes.set(request, process.hrtime.bigint());
    });
    app.addHook('onResponse', async (request, reply) => {
      const start = startTimes.get(request);
      if (start === undefined) return;
      const seconds = Number(process.hrtime.bigint() - start) / 1e9;
      metrics.httpDuration.observe(
        { method: request.method, route: request.routeOptions.url ?? 'unmatched', status_code: String(reply.statusCode) },
        seconds,
      );
    });

    const hidden = { schema: { hide: true } };
    app.get('/healthz', hidden, async () => ({ status: 'ok' }));
    app.get('/readyz', hidden, async (_request, reply) => {
      const waitingFor = await readiness.check();
      if (waitingFor.length > 0) return reply.code(503).send({ status: 'not_ready', waiting_for: waitingFor });
      return { status: 'ready' };
    });
    app.get('/metrics', hidden, async (_request, reply) => {
      reply.header('content-type', metrics.registry.contentType);
      return metrics.registry.metrics();
    });
  },
  { name: 'ops' },
);
