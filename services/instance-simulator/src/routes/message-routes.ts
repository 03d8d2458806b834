import type { FastifyInstance } from 'fastify';
import { requireInstance, requireInstanceKey } from '../auth.ts';
import { clientGoneSignal } from '../client-presence.ts';
import { badRequest, EvolutionError } from '../evolution-errors.ts';
import { newMessageId } from '../ids.ts';
import { createJid, isGroupJid, jidUser } from '../jid.ts';
import type { SendTextResponse } from '../sim-events.ts';
import type { SimContext } from '../sim-context.ts';
import { sleep } from '../sleep.ts';
import type { LedgerEntry } from '../types.ts';

// Evolution v2 POST /message/sendText/{instance} (sendMessage.router.ts → 201,
// BaileysStartupService.textMessage / sendMessageWithTyping).

interface SendTextBody {
  number?: unknown;
  text?: unknown;
  delay?: unknown;
}

/** Checks Evolution's textMessageSchema does: number and text are required strings. */
function validateSendText(body: SendTextBody | undefined): { number: string; text: string; delay: number } {
  const problems: string[] = [];
  if (typeof body?.number !== 'string') problems.push('instance requires property "number"');
  else if (body.number.trim() === '') problems.push('"number" cannot be empty');
  if (typeof body?.text !== 'string') problems.push('instance requires property "text"');
  else if (body.text === '') problems.push('"text" cannot be empty');
  if (body?.delay !== undefined && (typeof body.delay !== 'number' || !Number.isInteger(body.delay))) {
    problems.push('instance.delay is not of a type(s) integer');
  }
  if (problems.length > 0) throw badRequest(...problems);
  return { number: body!.number as string, text: body!.text as string, delay: (body!.delay as number) ?? 0 };
}

export function registerMessageRoutes(app: FastifyInstance, ctx: SimContext): void {
  app.post<{ Params: { instanceName?: string }; Body: SendTextBody | undefined }>(
    '/message/sendText/:instanceName',
    async (request, reply) => {
      const instance = requireInstance(ctx, request.params.instanceName);
      requireInstanceKey(ctx, request, instance);
      const { number, text, delay } = validateSendText(request.body);

      // With the WhatsApp socket down, Baileys throws "Connection Closed" and Evolution
      // wraps it as BadRequestException(error.toString()) → 400.
      if (instance.state !== 'open') throw badRequest('Error: Connection Closed');

      const jid = createJid(number);
      const fault = ctx.faults.take(instance.instanceName);
      // The phone unlinked this device: the socket closes (connection.update close) under the send.
      if (fault?.mode === 'disconnect') {
        ctx.store.disconnect(instance);
        throw badRequest('Error: Connection Closed');
      }
      if (fault?.mode === 'error_5xx') {
        throw new EvolutionError(500, 'Internal Server Error', 'Simulated failure (fault injection: error_5xx)');
      }
      // `stall`: a slow Evolution. Its Express route (src/api/routes/sendMessage.router.ts, 2.3.6 to
      // 2.4.0-rc2) awaits sendText and nothing in src/ listens for the request's 'close', so a
      // send whose client left is carried out all the same: sent, stored and posted when the slow
      // part ends (whatsapp.baileys.service.ts sendMessageWithTyping).
      if (fault?.mode === 'stall') await sleep(fault.delay_ms, ctx.shutdown);
      // `hang_unsent`: NOT a real Evolution behaviour (see above); a manager that dies with the
      // request. Kept for tests of a send that certainly never happened.
      if (fault?.mode === 'hang_unsent') {
        const client = clientGoneSignal(reply);
        await sleep(fault.delay_ms, AbortSignal.any([ctx.shutdown, client.signal]));
        client.dispose();
        if (client.signal.aborted) {
          request.log.info({ instance: instance.instanceName }, 'client left during a hang_unsent send; message not accepted');
          reply.hijack();
          reply.raw.destroy();
          return reply;
        }
      }
      // sendMessageWithTyping: BadRequestException(isWA) when onWhatsApp says no.
      const onWhatsApp = fault?.mode !== 'unknown_number' && (isGroupJid(jid) || ctx.directory.exists(number));
      if (!onWhatsApp) throw badRequest({ exists: false, jid, number: jidUser(jid) });

      // `delay`: sendMessageWithTyping, after the onWhatsApp check, shows "composing" to the
      // recipient for `delay` ms (in 20 s slices, presence renewed), then "paused", then sends;
      // the route answers only after the send (2.3.7 whatsapp.baileys.service.ts 2306-2339,
      // sendMessage.router.ts 54-63; the same at 2.3.6 and 2.4.0-rc2). A socket closed while it
      // types fails the presence update or the send: BadRequestException(error.toString()), 400.
      const typingMs = ctx.options.honourSendDelay && delay > 0 ? delay : 0;
      if (typingMs > 0) {
        await sleep(typingMs, ctx.shutdown);
        if (instance.state !== 'open') throw badRequest('Error: Connection Closed');
      }

      const now = new Date();
      const entry: LedgerEntry = {
        id: newMessageId(),
        instance: instance.instanceName,
        number,
        remote_jid: jid,
        text,
        received_at: now.toISOString(),
        ...(typingMs > 0 ? { typing_ms: typingMs } : {}),
      };
      ctx.ledger.record(entry);

      const response: SendTextResponse = {
        key: { remoteJid: jid, fromMe: true, id: entry.id },
        status: 'PENDING',
        message: { conversation: text },
        messageType: 'conversation',
        messageTimestamp: Math.floor(now.getTime() / 1000),
        instanceId: instance.instanceId,
        source: 'web',
      };
      if (fault?.mode === 'ack_error') ctx.acks.failMessage(entry.id);
      ctx.events.emit('send.message', instance, entry, response);

      // The ambiguous case: the message went out, but the answer comes too late.
      if (fault?.mode === 'timeout') await sleep(fault.delay_ms, ctx.shutdown);

      return reply.code(201).send(response);
    },
  );
}
