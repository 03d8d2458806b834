import Fastify, { type FastifyError, type FastifyInstance } from 'fastify';
import { EvolutionError, genericErrorBody } from './evolution-errors.ts';
import { FaultRegistry } from './fault-registry.ts';
import { InstanceStore } from './instance-store.ts';
import { Ledger } from './ledger.ts';
import { NumberDirectory } from './number-directory.ts';
import { resolveOptions } from './options.ts';
import { registerInstanceRoutes } from './routes/instance-routes.ts';
import { registerMessageRoutes } from './routes/message-routes.ts';
import { registerRootRoutes } from './routes/root-routes.ts';
import { registerSimRoutes } from './routes/sim-routes.ts';
import type { SimContext } from './sim-context.ts';
import { createSimEvents } from './sim-events.ts';
import type { SimulatorOptions } from './types.ts';

export interface Simulator {
  app: FastifyInstance;
  /** Direct access for in-process tests and for the later webhook/ack/phone-page issues. */
  context: SimContext;
}

/** Pino redaction: the apikey is a credential and must never reach the logs. */
const REDACT_PATHS = ['req.headers.apikey', 'headers.apikey', 'apikey'];

/** Builds the simulator; the returned fastify instance is not listening yet. */
export function buildSimulator(options: SimulatorOptions = {}): FastifyInstance {
  return createSimulator(options).app;
}

export function createSimulator(options: SimulatorOptions = {}): Simulator {
  const resolved = resolveOptions(options);
  const app = Fastify({
    logger: resolved.logger
      ? { level: resolved.logLevel, redact: { paths: REDACT_PATHS, censor: '[redacted]' } }
      : false,
    // Instance names are path segments; keep them as sent ("Foo" and "foo" differ).
    routerOptions: { caseSensitive: true, ignoreTrailingSlash: true },
  });

  const shutdownController = new AbortController();
  const events = createSimEvents();
  const context: SimContext = {
    options: resolved,
    events,
    store: new InstanceStore(events),
    ledger: new Ledger(),
    faults: new FaultRegistry(),
    directory: new NumberDirectory(resolved.unknownNumberPrefixes),
    shutdown: shutdownController.signal,
  };

  // Release delayed (timeout-fault / typing-delay) requests so close() does not hang.
  app.addHook('preClose', async () => {
    shutdownController.abort();
  });
  app.addHook('onClose', async () => {
    events.removeAllListeners();
  });

  app.setErrorHandler((error: FastifyError | EvolutionError, request, reply) => {
    if (error instanceof EvolutionError) {
      return reply.code(error.status).send(error.body());
    }
    const status = error.statusCode && error.statusCode >= 400 ? error.statusCode : 500;
    if (status >= 500) request.log.error({ err: error }, 'unhandled error');
    return reply.code(status).send(genericErrorBody(status, error.message));
  });

  // Evolution's catch-all 404 (src/main.ts).
  app.setNotFoundHandler((request, reply) => {
    reply.code(404).send({
      status: 404,
      error: 'Not Found',
      response: { message: [`Cannot ${request.method.toUpperCase()} ${request.url}`] },
    });
  });

  registerRootRoutes(app);
  registerInstanceRoutes(app, context);
  registerMessageRoutes(app, context);
  registerSimRoutes(app, context);

  return { app, context };
}
