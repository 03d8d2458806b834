import type { FastifyInstance } from 'fastify';
import { requireGlobalKey } from '../auth.ts';
import { badRequest } from '../evolution-errors.ts';
import type { SimContext } from '../sim-context.ts';

// Control plane (not part of Evolution): Evolution's DATABASE_SAVE_DATA_NEW_MESSAGE, for the
// server or one instance (a gateway may use instances on differently configured managers).
// See message-store.ts for where the real one reads the setting.

interface StorageBody {
  instance?: unknown;
  save_new_messages?: unknown;
}

export function registerStorageRoutes(app: FastifyInstance, ctx: SimContext): void {
  app.put<{ Body: StorageBody | undefined }>('/sim/storage', async (request) => {
    requireGlobalKey(ctx, request);
    const body = request.body;
    if (!body || typeof body !== 'object') throw badRequest('body must be a JSON object');
    if (typeof body.save_new_messages !== 'boolean') throw badRequest('save_new_messages must be a boolean');
    if (body.instance !== undefined && (typeof body.instance !== 'string' || body.instance === '')) {
      throw badRequest('instance must be a non-empty string');
    }
    ctx.messages.setSaving(body.save_new_messages, body.instance as string | undefined);
    return ctx.messages.savingSettings();
  });

  app.get('/sim/storage', async (request) => {
    requireGlobalKey(ctx, request);
    return ctx.messages.savingSettings();
  });
}
