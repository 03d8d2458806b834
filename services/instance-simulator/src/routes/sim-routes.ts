import type { FastifyInstance } from 'fastify';
import { requireGlobalKey, requireInstance } from '../auth.ts';
import { badRequest } from '../evolution-errors.ts';
import { FAULT_MODES, type FaultInput } from '../fault-registry.ts';
import { connectionStateView } from '../instance-views.ts';
import type { SimContext } from '../sim-context.ts';
import type { FaultMode } from '../types.ts';

// Control plane of the simulator (not part of Evolution): drive pairing, inject
// faults, read the ledger. Global key only; errors keep Evolution's shape.

interface PairBody {
  number?: unknown;
  profileName?: unknown;
}

interface FaultBody {
  instance?: unknown;
  mode?: unknown;
  count?: unknown;
  delay_ms?: unknown;
}

function parseFault(body: FaultBody | undefined): FaultInput {
  if (!body || typeof body !== 'object') throw badRequest('body must be a JSON object');
  const { instance, mode, count, delay_ms: delayMs } = body;
  if (typeof mode !== 'string' || !FAULT_MODES.includes(mode as FaultMode)) {
    throw badRequest(`mode must be one of ${FAULT_MODES.join(', ')}`);
  }
  if (instance !== undefined && (typeof instance !== 'string' || instance === '')) {
    throw badRequest('instance must be a non-empty string');
  }
  if (count !== undefined && (typeof count !== 'number' || !Number.isInteger(count) || count < 1)) {
    throw badRequest('count must be a positive integer');
  }
  if (delayMs !== undefined && (typeof delayMs !== 'number' || !Number.isInteger(delayMs) || delayMs < 0)) {
    throw badRequest('delay_ms must be a non-negative integer');
  }
  return {
    mode: mode as FaultMode,
    ...(instance !== undefined ? { instance } : {}),
    ...(count !== undefined ? { count } : {}),
    ...(delayMs !== undefined ? { delay_ms: delayMs } : {}),
  };
}

export function registerSimRoutes(app: FastifyInstance, ctx: SimContext): void {
  app.get('/sim/health', async () => ({ ok: true }));

  app.post<{ Params: { instanceName?: string }; Body: PairBody | undefined }>(
    '/sim/instances/:instanceName/pair',
    async (request) => {
      requireGlobalKey(ctx, request);
      const instance = requireInstance(ctx, request.params.instanceName);
      const body = request.body ?? {};
      ctx.store.completePairing(instance, {
        ...(typeof body.number === 'string' ? { number: body.number } : {}),
        ...(typeof body.profileName === 'string' ? { profileName: body.profileName } : {}),
      });
      return { ...connectionStateView(instance), ownerJid: instance.ownerJid };
    },
  );

  app.post<{ Params: { instanceName?: string } }>('/sim/instances/:instanceName/disconnect', async (request) => {
    requireGlobalKey(ctx, request);
    const instance = requireInstance(ctx, request.params.instanceName);
    ctx.store.disconnect(instance);
    return connectionStateView(instance);
  });

  app.put<{ Body: FaultBody | undefined }>('/sim/faults', async (request) => {
    requireGlobalKey(ctx, request);
    const rule = ctx.faults.set(parseFault(request.body));
    return { fault: rule ?? null, faults: ctx.faults.list() };
  });

  app.get('/sim/faults', async (request) => {
    requireGlobalKey(ctx, request);
    return { faults: ctx.faults.list() };
  });

  app.delete('/sim/faults', async (request) => {
    requireGlobalKey(ctx, request);
    ctx.faults.clear();
    return { faults: [] };
  });

  app.get<{ Querystring: { instance?: string } }>('/sim/ledger', async (request) => {
    requireGlobalKey(ctx, request);
    return { messages: ctx.ledger.list(request.query.instance || undefined) };
  });

  app.delete('/sim/ledger', async (request) => {
    requireGlobalKey(ctx, request);
    ctx.ledger.clear();
    return { messages: [] };
  });
}
