import type { FastifyInstance } from 'fastify';
import { requireInstance, requireInstanceKey } from '../auth.ts';
import { badRequest } from '../evolution-errors.ts';
import type { SimContext } from '../sim-context.ts';
import { buildWebhookConfig, parseWebhookInput, webhookView } from '../webhook-config.ts';

// Evolution v2 /webhook/set and /webhook/find (webhook.router.ts: 201 and 200,
// webhook.controller.ts set(): the Prisma Webhook row upserted per instance).

interface InstanceParams {
  instanceName?: string;
}

export function registerWebhookRoutes(app: FastifyInstance, ctx: SimContext): void {
  app.post<{ Params: InstanceParams; Body: { webhook?: unknown } | undefined }>(
    '/webhook/set/:instanceName',
    async (request, reply) => {
      const instance = requireInstance(ctx, request.params.instanceName);
      requireInstanceKey(ctx, request, instance);
      const body = request.body;
      if (!body || typeof body !== 'object' || body.webhook === undefined) {
        throw badRequest('instance requires property "webhook"');
      }
      const webhook = body.webhook as Record<string, unknown> | null;
      if (webhook && typeof webhook === 'object' && webhook.enabled === undefined) {
        throw badRequest('instance.webhook requires property "enabled"');
      }
      const input = parseWebhookInput(body.webhook);
      const config = ctx.store.setWebhook(instance, buildWebhookConfig(instance.instanceId, input, instance.webhook));
      return reply.code(201).send(webhookView(config));
    },
  );

  app.get<{ Params: InstanceParams }>('/webhook/find/:instanceName', async (request, reply) => {
    const instance = requireInstance(ctx, request.params.instanceName);
    requireInstanceKey(ctx, request, instance);
    // Evolution answers the row, or null when the instance never had a webhook.
    if (!instance.webhook) return reply.type('application/json').send('null');
    return webhookView(instance.webhook);
  });
}
