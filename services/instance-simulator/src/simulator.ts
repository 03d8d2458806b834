import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyError, type FastifyInstance } from 'fastify';
import { AckScheduler } from './acks.ts';
import { EvolutionEventLog, wireEvolutionEvents } from './evolution-events.ts';
import { EvolutionError, genericErrorBody } from './evolution-errors.ts';
import { FaultRegistry } from './fault-registry.ts';
import { InstanceStore } from './instance-store.ts';
import { Ledger } from './ledger.ts';
import { MessageStore } from './message-store.ts';
import { NumberDirectory } from './number-directory.ts';
import { resolveOptions } from './options.ts';
import { Phone } from './phone.ts';
import { registerChatRoutes } from './routes/chat-routes.ts';
import { registerInboxRoutes } from './routes/inbox-routes.ts';
import { registerInstanceRoutes } from './routes/instance-routes.ts';
import { registerMessageRoutes } from './routes/message-routes.ts';
import { registerLicenseGate } from './routes/license-gate.ts';
import { registerRootRoutes } from './routes/root-routes.ts';
import { registerPhonePage } from './routes/phone-page.ts';
import { registerSimRoutes } from './routes/sim-routes.ts';
import { registerStorageRoutes } from './routes/storage-routes.ts';
import { registerWebhookRoutes } from './routes/webhook-routes.ts';
import type { SimContext } from './sim-context.ts';
import { createSimEvents } from './sim-events.ts';
import type { SimulatorOptions } from './types.ts';
import { WebhookDispatcher } from './webhook-dispatcher.ts';

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
  const store = new InstanceStore(events);
  const eventLog = new EvolutionEventLog();
  const webhooks = new WebhookDispatcher(resolved.webhookRetry, shutdownController.signal);
  const messages = new MessageStore(resolved.saveNewMessages);
  // Subscribed first, so each event is logged and queued before other listeners react to it.
  wireEvolutionEvents({
    events,
    dispatcher: webhooks,
    log: eventLog,
    options: resolved,
    serverUrl: () => resolved.serverUrl ?? listeningUrl(app),
    messageRowId: (keyId) => messages.rowIdFor(keyId),
    storesMessages: (instanceName) => messages.saves(instanceName),
    // Called only once events flow, after `context` exists.
    chatExists: (instanceName, remoteJid) => context.phone.hasChat(instanceName, remoteJid),
  });
  messages.listenTo(events);
  const context: SimContext = {
    options: resolved,
    events,
    store,
    ledger: new Ledger(),
    messages,
    faults: new FaultRegistry(),
    directory: new NumberDirectory(resolved.unknownNumberPrefixes),
    webhooks,
    eventLog,
    acks: new AckScheduler(resolved.ackDelays, events, store),
    phone: new Phone(events),
    shutdown: shutdownController.signal,
  };

  // Release delayed (timeout-fault / typing-delay) requests, pending acks, calls and
  // webhook retries so close() does not hang.
  app.addHook('preClose', async () => {
    shutdownController.abort();
    context.acks.stop();
    context.phone.stop();
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

  // Before the routes: Evolution 2.4's licence gate sits in front of its router.
  registerLicenseGate(app, context);
  registerRootRoutes(app);
  registerInstanceRoutes(app, context);
  registerMessageRoutes(app, context);
  registerChatRoutes(app, context);
  registerWebhookRoutes(app, context);
  registerSimRoutes(app, context);
  registerStorageRoutes(app, context);
  registerInboxRoutes(app);
  registerPhonePage(app, context);

  return { app, context };
}

/** Evolution's SERVER_URL stand-in: where this simulator listens. */
function listeningUrl(app: FastifyInstance): string {
  const address = app.server.address() as AddressInfo | string | null;
  if (!address || typeof address === 'string') return 'http://127.0.0.1';
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return `http://${host === '0.0.0.0' || host === '[::]' ? '127.0.0.1' : host}:${address.port}`;
}
