import type { FastifyInstance } from 'fastify';
import { requireGlobalKey, requireInstance } from '../auth.ts';
import { badRequest } from '../evolution-errors.ts';
import { FAULT_MODES, type FaultInput } from '../fault-registry.ts';
import { connectionStateView, qrCodeView } from '../instance-views.ts';
import type { SimContext } from '../sim-context.ts';
import { registerSimInboundRoutes } from './sim-inbound-routes.ts';
import type { FaultMode, ResolvedAckDelays, SimInstance } from '../types.ts';

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

type Body = Record<string, unknown> | undefined;
type InstanceRoute = { Params: { instanceName?: string }; Body: Body };

const isNonEmptyString = (value: unknown): value is string => typeof value === 'string' && value.trim() !== '';

function requireString(body: Body, field: string): string {
  const value = body?.[field];
  if (!isNonEmptyString(value)) throw badRequest(`${field} must be a non-empty string`);
  return value;
}

function optionalString(body: Body, field: string): string | undefined {
  const value = body?.[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw badRequest(`${field} must be a string`);
  return value;
}

function optionalDelay(body: Body, field: string): number | undefined {
  const value = body?.[field];
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > 600_000) {
    throw badRequest(`${field} must be an integer between 0 and 600000`);
  }
  return value;
}

/** Messages, calls and group changes only reach a connected instance. */
function requireOpen(instance: SimInstance): void {
  if (instance.state !== 'open') throw badRequest(`The "${instance.instanceName}" instance is not connected`);
}

function parseAckDelays(body: Body): Partial<ResolvedAckDelays> {
  if (!body || typeof body !== 'object') throw badRequest('body must be a JSON object');
  const fields = { server_ms: 'serverAckMs', delivery_ms: 'deliveryMs', read_ms: 'readMs' } as const;
  const delays: Partial<ResolvedAckDelays> = {};
  for (const [field, key] of Object.entries(fields)) {
    const value = body[field];
    if (value === undefined) continue;
    if (value !== null && (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > 600_000)) {
      throw badRequest(`${field} must be null or an integer between 0 and 600000`);
    }
    delays[key] = value as number | null;
  }
  return delays;
}

const ackView = (delays: ResolvedAckDelays) => ({
  server_ms: delays.serverAckMs,
  delivery_ms: delays.deliveryMs,
  read_ms: delays.readMs,
});

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

  registerSimInboundRoutes(app, ctx);

  app.post<InstanceRoute>('/sim/instances/:instanceName/group-message', async (request) => {
    requireGlobalKey(ctx, request);
    const instance = requireInstance(ctx, request.params.instanceName);
    const groupId = requireString(request.body, 'group_id');
    // `participant_lid`: a member of a LID-addressed group (key.participant @lid; with
    // `participant` too, key.participantAlt is its number).
    const participant = optionalString(request.body, 'participant');
    const participantLid = optionalString(request.body, 'participant_lid');
    if (!isNonEmptyString(participant) && !isNonEmptyString(participantLid)) throw badRequest('participant must be a non-empty string (or give participant_lid)');
    const text = requireString(request.body, 'text');
    const pushName = optionalString(request.body, 'push_name');
    requireOpen(instance);
    const message = ctx.phone.receiveGroupText(instance, {
      groupId,
      ...(participant ? { participant } : {}),
      ...(participantLid ? { participantLid: participantLid.trim() } : {}),
      text,
      ...(pushName ? { pushName } : {}),
    });
    return { message };
  });

  app.post<InstanceRoute>('/sim/instances/:instanceName/call', async (request) => {
    requireGlobalKey(ctx, request);
    const instance = requireInstance(ctx, request.params.instanceName);
    const body = request.body;
    // `lid`: a LID-addressed caller (Baileys reports from/chatId as `@lid`).
    const from = optionalString(body, 'from');
    const lid = optionalString(body, 'lid');
    if (!isNonEmptyString(from) && !isNonEmptyString(lid)) throw badRequest('from must be a non-empty string (or give lid)');
    const missed = body?.missed ?? false;
    if (typeof missed !== 'boolean') throw badRequest('missed must be a boolean');
    const outcome = body?.outcome;
    if (outcome !== undefined && outcome !== 'accept' && outcome !== 'timeout' && outcome !== 'reject') {
      throw badRequest('outcome must be one of accept, timeout, reject');
    }
    const isVideo = body?.is_video;
    if (isVideo !== undefined && typeof isVideo !== 'boolean') throw badRequest('is_video must be a boolean');
    const ringMs = optionalDelay(body, 'ring_ms');
    const talkMs = optionalDelay(body, 'talk_ms');
    requireOpen(instance);
    const call = ctx.phone.call(instance, {
      ...(from ? { from } : {}),
      ...(lid ? { lid: lid.trim() } : {}),
      missed,
      ...(outcome !== undefined ? { outcome } : {}),
      ...(isVideo !== undefined ? { isVideo } : {}),
      ...(ringMs !== undefined ? { ringMs } : {}),
      ...(talkMs !== undefined ? { talkMs } : {}),
    });
    return { call: { ...call, date: call.date.toISOString() } };
  });

  app.post<InstanceRoute>('/sim/instances/:instanceName/group-update', async (request) => {
    requireGlobalKey(ctx, request);
    const instance = requireInstance(ctx, request.params.instanceName);
    const groupId = requireString(request.body, 'group_id');
    const subject = requireString(request.body, 'subject');
    const author = optionalString(request.body, 'author');
    requireOpen(instance);
    const group = ctx.phone.updateGroup(instance, { groupId, subject, ...(author ? { author } : {}) });
    return { group };
  });

  app.post<InstanceRoute>('/sim/instances/:instanceName/group-participants', async (request) => {
    requireGlobalKey(ctx, request);
    const instance = requireInstance(ctx, request.params.instanceName);
    const groupId = requireString(request.body, 'group_id');
    const participants = request.body?.participants;
    if (!Array.isArray(participants) || participants.length === 0 || !participants.every(isNonEmptyString)) {
      throw badRequest('participants must be a non-empty array of numbers');
    }
    const action = request.body?.action;
    if (action !== 'add' && action !== 'remove' && action !== 'promote' && action !== 'demote') {
      throw badRequest('action must be one of add, remove, promote, demote');
    }
    const author = optionalString(request.body, 'author');
    requireOpen(instance);
    const group = ctx.phone.updateParticipants(instance, {
      groupId,
      participants,
      action,
      ...(author ? { author } : {}),
    });
    return { group };
  });

  /** What the phone page polls: the instance, its QR, what was sent (with ack status) and received. */
  app.get<{ Params: { instanceName?: string } }>('/sim/instances/:instanceName/conversation', async (request) => {
    requireGlobalKey(ctx, request);
    const instance = requireInstance(ctx, request.params.instanceName);
    return {
      instance: instance.instanceName,
      state: instance.state,
      owner_jid: instance.ownerJid,
      qrcode: instance.state === 'connecting' ? qrCodeView(instance) : null,
      outbound: ctx.ledger
        .list(instance.instanceName)
        .map((entry) => ({ ...entry, status: ctx.acks.statusOf(entry.id) ?? 'PENDING' })),
      inbound: ctx.phone.inboundMessages(instance.instanceName),
      calls: ctx.phone.calls(instance.instanceName).map((call) => ({ ...call, date: call.date.toISOString() })),
    };
  });

  app.get('/sim/acks', async (request) => {
    requireGlobalKey(ctx, request);
    return ackView(ctx.acks.getDelays());
  });

  app.put<{ Body: Body }>('/sim/acks', async (request) => {
    requireGlobalKey(ctx, request);
    return ackView(ctx.acks.setDelays(parseAckDelays(request.body)));
  });

  app.get<{ Querystring: { instance?: string; event?: string } }>('/sim/events', async (request) => {
    requireGlobalKey(ctx, request);
    const { instance, event } = request.query;
    return { events: ctx.eventLog.list({ ...(instance ? { instance } : {}), ...(event ? { event } : {}) }) };
  });

  app.delete('/sim/events', async (request) => {
    requireGlobalKey(ctx, request);
    ctx.eventLog.clear();
    return { events: [] };
  });

  app.get<{ Querystring: { instance?: string } }>('/sim/webhooks/deliveries', async (request) => {
    requireGlobalKey(ctx, request);
    return { deliveries: ctx.webhooks.list(request.query.instance || undefined) };
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
