import type { FastifyInstance } from 'fastify';
import { requireGlobalKey, requireInstance } from '../auth.ts';
import { badRequest, EvolutionError } from '../evolution-errors.ts';
import { noReconnectCodes } from '../evolution-events.ts';
import type { InboundContent } from '../sim-events.ts';
import type { SimContext } from '../sim-context.ts';
import { connectionStateView } from '../instance-views.ts';
import type { MessageStatus, SimInstance } from '../types.ts';

// The /sim controls for what the other side of the line and WhatsApp do to an instance, each
// reproducing what Evolution posts for it (README: "Behaviour → real source"): inbound messages
// from numbers or LIDs, text / extended text / image, reads on the business's own phone, edits,
// deletes, a status on one of our sends, the QR limit, and disconnects with a reason code.

type Body = Record<string, unknown> | undefined;
type InstanceRoute = { Params: { instanceName?: string }; Body: Body };
type MessageRoute = { Params: { instanceName?: string; messageId?: string }; Body: Body };

const STATUSES: MessageStatus[] = ['ERROR', 'PENDING', 'SERVER_ACK', 'DELIVERY_ACK', 'READ', 'PLAYED'];
const IMAGE_TYPES = ['image/jpeg', 'image/png', 'image/webp'];
/** A 1×1 PNG: the image an `image` inbound carries unless `image_base64` is given. */
const DEFAULT_IMAGE =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
const MAX_IMAGE_BASE64 = 2_000_000;

function optionalString(body: Body, field: string): string | undefined {
  const value = body?.[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string' || value.trim() === '') throw badRequest(`${field} must be a non-empty string`);
  return value;
}

function requireOpen(instance: SimInstance): void {
  if (instance.state !== 'open') throw badRequest(`The "${instance.instanceName}" instance is not connected`);
}

/** A LID is WhatsApp's numeric privacy id, optionally written with `@lid`. */
function optionalLid(body: Body, field: string): string | undefined {
  const lid = optionalString(body, field);
  if (lid !== undefined && !/^\d{6,20}(@lid)?$/.test(lid.trim())) throw badRequest(`${field} must be digits, optionally ending in @lid`);
  return lid?.trim();
}

function parseContent(body: Body): InboundContent {
  const type = body?.type ?? 'text';
  if (type === 'text' || type === 'extended_text') {
    const text = optionalString(body, 'text');
    if (text === undefined) throw badRequest('text must be a non-empty string');
    return type === 'text' ? { type: 'conversation', text } : { type: 'extendedTextMessage', text };
  }
  if (type === 'image') {
    const caption = body?.caption;
    if (caption !== undefined && caption !== null && typeof caption !== 'string') throw badRequest('caption must be a string');
    const mimetype = body?.mimetype ?? 'image/png';
    if (typeof mimetype !== 'string' || !IMAGE_TYPES.includes(mimetype)) throw badRequest(`mimetype must be one of ${IMAGE_TYPES.join(', ')}`);
    const base64 = body?.image_base64 ?? DEFAULT_IMAGE;
    if (typeof base64 !== 'string' || base64.length > MAX_IMAGE_BASE64 || !/^[A-Za-z0-9+/]+={0,2}$/.test(base64)) {
      throw badRequest('image_base64 must be base64 (at most 2,000,000 characters)');
    }
    return { type: 'imageMessage', caption: typeof caption === 'string' ? caption : null, mimetype, base64 };
  }
  throw badRequest('type must be one of text, extended_text, image');
}

function inboundOf(ctx: SimContext, instance: SimInstance, messageId: string | undefined) {
  const message = messageId ? ctx.phone.findInbound(instance, messageId) : undefined;
  if (!message) throw new EvolutionError(404, 'Not Found', `No received message ${messageId ?? ''} on this instance`);
  return message;
}

export function registerSimInboundRoutes(app: FastifyInstance, ctx: SimContext): void {
  // A contact writes: `from` (a number) and/or `lid` (a LID-addressed sender; with `from` too,
  // WhatsApp also gave its number). `type`: text (default), extended_text, image (+caption).
  app.post<InstanceRoute>('/sim/instances/:instanceName/inbound', async (request) => {
    requireGlobalKey(ctx, request);
    const instance = requireInstance(ctx, request.params.instanceName);
    const from = optionalString(request.body, 'from');
    const lid = optionalLid(request.body, 'lid');
    if (!from && !lid) throw badRequest('from must be a non-empty string (or give lid)');
    const content = parseContent(request.body);
    const pushName = optionalString(request.body, 'push_name');
    requireOpen(instance);
    const message = ctx.phone.receive(instance, {
      content,
      ...(from ? { from } : {}),
      ...(lid ? { lid } : {}),
      ...(pushName ? { pushName } : {}),
    });
    return { message };
  });

  /** The business reads a received message on its own phone: messages.update READ, fromMe false. */
  app.post<MessageRoute>('/sim/instances/:instanceName/messages/:messageId/read', async (request) => {
    requireGlobalKey(ctx, request);
    const instance = requireInstance(ctx, request.params.instanceName);
    const message = inboundOf(ctx, instance, request.params.messageId);
    requireOpen(instance);
    ctx.phone.readByOwner(instance, message);
    return { message };
  });

  app.post<MessageRoute>('/sim/instances/:instanceName/messages/:messageId/edit', async (request) => {
    requireGlobalKey(ctx, request);
    const instance = requireInstance(ctx, request.params.instanceName);
    const message = inboundOf(ctx, instance, request.params.messageId);
    const text = optionalString(request.body, 'text');
    if (text === undefined) throw badRequest('text must be a non-empty string');
    requireOpen(instance);
    ctx.phone.edit(instance, message, text);
    return { message };
  });

  app.post<MessageRoute>('/sim/instances/:instanceName/messages/:messageId/delete', async (request) => {
    requireGlobalKey(ctx, request);
    const instance = requireInstance(ctx, request.params.instanceName);
    const message = inboundOf(ctx, instance, request.params.messageId);
    requireOpen(instance);
    ctx.phone.revoke(instance, message);
    return { message };
  });

  /**
   * A status for one of our own sends, e.g. ERROR as WhatsApp rejects a send: Evolution posts
   * messages.update with only `status` (the error code in messageStubParameters is dropped).
   * Acks already scheduled for it still follow unless PUT /sim/acks stopped them.
   */
  app.post<MessageRoute>('/sim/instances/:instanceName/messages/:messageId/status', async (request) => {
    requireGlobalKey(ctx, request);
    const instance = requireInstance(ctx, request.params.instanceName);
    const entry = ctx.ledger.list(instance.instanceName).find((sent) => sent.id === request.params.messageId);
    if (!entry) throw new EvolutionError(404, 'Not Found', `No sent message ${request.params.messageId ?? ''} on this instance`);
    const status = request.body?.status ?? 'ERROR';
    if (typeof status !== 'string' || !STATUSES.includes(status as MessageStatus)) throw badRequest(`status must be one of ${STATUSES.join(', ')}`);
    ctx.events.emit('message.status', instance, entry, status as MessageStatus);
    return { id: entry.id, status };
  });

  /**
   * The QR was shown QRCODE_LIMIT times unscanned: qrcode.updated {message, statusCode: 500},
   * connection.update `refused` (428); the monitor's no.connection then leaves the instance
   * `close` with its QR count reset, posting nothing more (monitor.service.ts noConnection).
   */
  app.post<InstanceRoute>('/sim/instances/:instanceName/qr-limit', async (request) => {
    requireGlobalKey(ctx, request);
    const instance = requireInstance(ctx, request.params.instanceName);
    if (instance.state !== 'connecting') throw badRequest(`The "${instance.instanceName}" instance is not showing a QR code`);
    ctx.events.emit('qrcode.limit', instance);
    // No connection.update follows in Evolution, so the state changes here without the store's event.
    instance.state = 'close';
    instance.qrCode = null;
    instance.updatedAt = new Date();
    return connectionStateView(instance);
  });

  /**
   * WhatsApp drops the connection with a Baileys DisconnectReason (default 401 loggedOut).
   * 401/403/402/406 (and 408 in 2.4.0-rc2): Evolution gives up (status.instance, logout.instance,
   * connection.update close). Any other code (428 connectionClosed, 515...): Evolution reconnects,
   * posting connecting (200) and, after `reconnect_ms` (default 100), open, and no close.
   */
  app.post<InstanceRoute>('/sim/instances/:instanceName/disconnect', async (request) => {
    requireGlobalKey(ctx, request);
    const instance = requireInstance(ctx, request.params.instanceName);
    const reason = request.body?.status_reason ?? 401;
    if (typeof reason !== 'number' || !Number.isInteger(reason)) {
      throw badRequest('status_reason must be an integer (a Baileys DisconnectReason)');
    }
    const reconnectMs = request.body?.reconnect_ms ?? 100;
    if (typeof reconnectMs !== 'number' || !Number.isInteger(reconnectMs) || reconnectMs < 0 || reconnectMs > 600_000) {
      throw badRequest('reconnect_ms must be an integer between 0 and 600000');
    }
    if (noReconnectCodes(ctx.options.evolutionVersion).includes(reason) || instance.state !== 'open') {
      ctx.store.disconnect(instance, reason);
      return connectionStateView(instance);
    }
    // Evolution's connectToWhatsapp on a live session: Baileys reports `connecting` then `open`.
    const previous = instance.state;
    instance.state = 'connecting';
    instance.updatedAt = new Date();
    ctx.events.emit('connection.update', instance, previous, 200);
    const owner = { number: (instance.ownerJid ?? '').split('@')[0] ?? '', ...(instance.profileName ? { profileName: instance.profileName } : {}) };
    const timer = setTimeout(() => {
      if (ctx.store.get(instance.instanceName) === instance && instance.state === 'connecting') ctx.store.completePairing(instance, owner);
    }, reconnectMs);
    timer.unref();
    ctx.shutdown.addEventListener('abort', () => clearTimeout(timer), { once: true });
    return connectionStateView(instance);
  });

  /** Waits until every webhook post has been delivered or given up (or `timeout_ms`, default 30000, passed). */
  app.get<{ Querystring: { timeout_ms?: string } }>('/sim/webhooks/settled', async (request) => {
    requireGlobalKey(ctx, request);
    const timeoutMs = Math.min(Math.max(Number.parseInt(request.query.timeout_ms ?? '30000', 10) || 0, 0), 600_000);
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, timeoutMs);
    });
    await Promise.race([ctx.webhooks.idle(), timedOut]);
    clearTimeout(timer);
    const pending = ctx.webhooks.pending();
    return { settled: pending === 0, pending };
  });
}
