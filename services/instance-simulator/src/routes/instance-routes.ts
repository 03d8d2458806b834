import type { FastifyInstance } from 'fastify';
import { requireGlobalKey, requireInstance, requireInstanceKey, apiKeyOf, isGlobalKey } from '../auth.ts';
import { badRequest, forbidden, notFound, unauthorized } from '../evolution-errors.ts';
import { connectionStateView, fetchInstanceView, qrCodeView } from '../instance-views.ts';
import type { SimContext } from '../sim-context.ts';
import { INTEGRATIONS, type InstanceSettings, type Integration } from '../types.ts';
import { parseWebhookInput, type WebhookInput } from '../webhook-config.ts';
import { sleep } from '../sleep.ts';

// Evolution v2 /instance/* (src/api/routes/instance.router.ts + instance.controller.ts).

interface InstanceParams {
  instanceName?: string;
}

interface CreateBody {
  instanceName?: unknown;
  token?: unknown;
  qrcode?: unknown;
  number?: unknown;
  integration?: unknown;
  webhook?: { url?: unknown; byEvents?: unknown; base64?: unknown; headers?: unknown; events?: unknown };
  websocket?: { enabled?: unknown };
  rabbitmq?: { enabled?: unknown };
  sqs?: { enabled?: unknown };
  rejectCall?: unknown;
  msgCall?: unknown;
  groupsIgnore?: unknown;
  alwaysOnline?: unknown;
  readMessages?: unknown;
  readStatus?: unknown;
  syncFullHistory?: unknown;
}

const optionalString = (value: unknown): string | undefined =>
  typeof value === 'string' && value.length > 0 ? value : undefined;

export function registerInstanceRoutes(app: FastifyInstance, ctx: SimContext): void {
  app.post<{ Body: CreateBody | undefined }>('/instance/create', async (request, reply) => {
    const body = request.body ?? {};
    const instanceName = optionalString(body.instanceName);

    // instanceLoggedGuard runs before the apikey guard: a taken name is 403 first.
    if (instanceName && ctx.store.has(instanceName)) {
      throw forbidden(`This name "${instanceName}" is already in use.`);
    }
    requireGlobalKey(ctx, request);
    if (!instanceName) throw badRequest('instance requires property "instanceName"');

    const integration = (optionalString(body.integration) ?? 'WHATSAPP-BAILEYS') as Integration;
    if (!INTEGRATIONS.includes(integration)) throw badRequest('Invalid integration');
    const number = optionalString(body.number);
    if (integration === 'WHATSAPP-BUSINESS' && !number) throw badRequest('number is required');

    const settings: InstanceSettings = {
      rejectCall: body.rejectCall === true,
      msgCall: typeof body.msgCall === 'string' ? body.msgCall : '',
      groupsIgnore: body.groupsIgnore === true,
      alwaysOnline: body.alwaysOnline === true,
      readMessages: body.readMessages === true,
      readStatus: body.readStatus === true,
      syncFullHistory: body.syncFullHistory === true,
    };
    // eventManager.setInstance: a `webhook` with a url is stored enabled (all events unless listed).
    let webhook: WebhookInput | null = null;
    if (body.webhook && typeof body.webhook === 'object' && body.webhook.url !== undefined) {
      webhook = { ...parseWebhookInput(body.webhook), enabled: true };
    }
    const token = optionalString(body.token);
    const instance = ctx.store.create({
      instanceName,
      integration,
      settings,
      number: number ?? null,
      webhook,
      ...(token ? { token } : {}),
    });

    // Evolution connects right away when asked for a QR code (Baileys only), then waits 5 s
    // before it answers (instance.controller.ts createInstance: `connectToWhatsapp(number)`,
    // `await delay(5000)`; tags 2.3.6 and 2.4.0-rc2). The instance exists from the start: a
    // client that gives up sooner leaves it behind, pairing.
    const wantsQr = body.qrcode === true && integration === 'WHATSAPP-BAILEYS';
    if (wantsQr) {
      await ctx.store.startConnecting(instance, number);
      await sleep(ctx.options.createQrDelayMs, ctx.shutdown);
    }

    return reply.code(201).send({
      instance: {
        instanceName: instance.instanceName,
        instanceId: instance.instanceId,
        integration: instance.integration,
        webhookWaBusiness: null,
        accessTokenWaBusiness: '',
        status: 'created',
      },
      hash: instance.token,
      webhook: {
        webhookUrl: body.webhook?.url,
        webhookByEvents: body.webhook?.byEvents,
        webhookBase64: body.webhook?.base64,
      },
      websocket: { enabled: body.websocket?.enabled },
      rabbitmq: { enabled: body.rabbitmq?.enabled },
      sqs: { enabled: body.sqs?.enabled },
      settings,
      ...(wantsQr ? { qrcode: qrCodeView(instance) } : {}),
    });
  });

  app.get<{ Querystring: { instanceName?: string; instanceId?: string; number?: string } }>(
    '/instance/fetchInstances',
    async (request) => {
      const key = apiKeyOf(request);
      if (!key) throw unauthorized();
      let name = optionalString(request.query.instanceName);
      if (!isGlobalKey(ctx, key)) {
        // An instance token may list only its own instance (instance.controller fetchInstances).
        const own = ctx.store.findByToken(key);
        if (!own) throw unauthorized();
        name = own.instanceName;
      }

      if (name) {
        const instance = ctx.store.get(name);
        if (!instance) throw notFound(`Instance "${name}" not found`);
        return [fetchInstanceView(instance, ctx.ledger)];
      }
      const { instanceId, number } = request.query;
      if (instanceId || number) {
        const instance = ctx.store
          .list()
          .find((candidate) => (instanceId ? candidate.instanceId === instanceId : candidate.number === number));
        if (!instance) throw notFound(`Instance "${instanceId ?? number}" not found`);
        return [fetchInstanceView(instance, ctx.ledger)];
      }
      return ctx.store.list().map((instance) => fetchInstanceView(instance, ctx.ledger));
    },
  );

  app.get<{ Params: InstanceParams; Querystring: { number?: string } }>(
    '/instance/connect/:instanceName',
    async (request) => {
      const instance = requireInstance(ctx, request.params.instanceName);
      requireInstanceKey(ctx, request, instance);

      // instance.controller.ts connectToWhatsapp (2.3.6, 2.4.0-rc2): open answers the state;
      // connecting answers the QR it holds and ignores `number` (so no pairing code: Evolution
      // issue #2197); only from close does it connect again, with the number.
      if (instance.state === 'open') return connectionStateView(instance);
      if (instance.state === 'close') {
        await ctx.store.startConnecting(instance, optionalString(request.query.number) ?? instance.number);
      }
      return qrCodeView(instance);
    },
  );

  app.get<{ Params: InstanceParams }>('/instance/connectionState/:instanceName', async (request) => {
    const instance = requireInstance(ctx, request.params.instanceName);
    requireInstanceKey(ctx, request, instance);
    return connectionStateView(instance);
  });

  app.delete<{ Params: InstanceParams }>('/instance/logout/:instanceName', async (request) => {
    const instance = requireInstance(ctx, request.params.instanceName);
    requireInstanceKey(ctx, request, instance);
    if (instance.state === 'close') {
      throw badRequest(`The "${instance.instanceName}" instance is not connected`);
    }
    // 2.3.x answers before the logout is done (instance.controller.ts logout calls
    // logoutInstance without await); the state turns close when Baileys closes the socket.
    // 2.4.0-rc2 awaits it; a client must not count on either.
    ctx.store.closeLater(instance, ctx.options.logoutCloseDelayMs, ctx.shutdown);
    return { status: 'SUCCESS', error: false, response: { message: 'Instance logged out' } };
  });

  app.delete<{ Params: InstanceParams }>('/instance/delete/:instanceName', async (request) => {
    const instance = requireInstance(ctx, request.params.instanceName);
    requireInstanceKey(ctx, request, instance);
    // Since 2.3.0 deleteInstance logs a connecting or open instance out itself, then removes it
    // (2.2.x refused an open one with "needs to be disconnected").
    if (instance.state !== 'close') ctx.store.disconnect(instance);
    ctx.store.delete(instance.instanceName);
    return { status: 'SUCCESS', error: false, response: { message: 'Instance deleted' } };
  });
}
