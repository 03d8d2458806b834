import type { FastifyInstance } from 'fastify';
import { ApiError, ApiErrorSchema, normalizePhone, ref, SendMessageRequestSchema, SendMessageSuccessSchema } from '@gw/contract';
import type { Pool } from '@gw/db';
import { newEventId, type EventCodec, type SendRequested } from '@gw/events';
import type { KafkaClient } from '@gw/kafka';
import { newId } from '@gw/security';
import { authenticate } from '../plugins/auth.ts';
import { requireJson } from '../plugins/require-json.ts';
import { claimIdempotencyKey, IDEMPOTENCY_KEY_PATTERN, requestHash } from './idempotency.ts';
import { instanceFinder } from './instances.ts';
import { toResponse } from './outcome.ts';
import { commandDecided } from './progress-store.ts';
import type { ReplyRouter } from './reply-router.ts';

export interface SendMessageDeps {
  pool: Pool;
  kafka: KafkaClient;
  codec: EventCodec;
  replies: ReplyRouter;
  deadlineMs: number;
  /** An idempotent retry re-appends an undecided command only once the first append is this old (IDEMPOTENT_REAPPEND_AFTER_MS). */
  reappendAfterMs: number;
  clock?: () => number;
}

interface SendBody {
  instance_id: string;
  phone: string;
  message: string;
  message_purpose: string;
}


const errorResponses = Object.fromEntries(
  [400, 401, 403, 404, 413, 415, 422, 423, 429, 500, 502].map((status) => [status, { ...ref(ApiErrorSchema), description: 'ApiError' }]),
);

export async function sendMessageRoutes(app: FastifyInstance, deps: SendMessageDeps): Promise<void> {
  const clock = deps.clock ?? Date.now;
  const findOwnedInstance = instanceFinder(deps.pool);
  app.post<{ Body: SendBody; Headers: { 'idempotency-key'?: string } }>(
    '/api/send-message',
    {
      onRequest: [authenticate(deps.pool), requireJson],
      schema: {
        summary: 'Send one guarded message',
        description:
          'Validates, authenticates and records the send, then waits for the responsible-messaging decision and the delivery through the paired instance. With an Idempotency-Key, a retried request returns the recorded outcome and never sends twice.',
        security: [{ bearerAuth: [] }],
        headers: {
          type: 'object',
          properties: {
            'idempotency-key': { type: 'string', pattern: IDEMPOTENCY_KEY_PATTERN, description: 'Optional; 1-255 printable ASCII characters, unique per request.' },
          },
        },
        body: ref(SendMessageRequestSchema),
        response: { 200: { ...ref(SendMessageSuccessSchema), description: 'SendMessageSuccess' }, ...errorResponses },
      },
    },
    async (request, reply) => {
      const caller = request.caller!;
      const body = request.body;
      const phone = normalizePhone(body.phone);
      if (!phone) {
        throw new ApiError('validation_error', 'phone must be a possible number in international format, e.g. +14155552671.', {
          field: 'phone',
          rule: 'international_format',
        });
      }
      const instance = await findOwnedInstance(caller.customerId, body.instance_id);
      if (!instance) {
        throw new ApiError('invalid_instance', 'No instance with this id or name belongs to your account.', { field: 'instance_id', value: body.instance_id });
      }

      let ids = { commandId: newId('cmd'), messageId: newId('msg') };
      const idempotencyKey = request.headers['idempotency-key'];
      let replay: { ageMs: number } | null = null;
      if (idempotencyKey !== undefined) {
        const claim = await claimIdempotencyKey(deps.pool, caller.customerId, idempotencyKey, requestHash(body), ids);
        if (claim.kind === 'replay') {
          ids = { commandId: claim.commandId, messageId: claim.messageId };
          replay = { ageMs: claim.ageMs };
        }
      }

      const command: SendRequested = {
        event_id: newEventId(),
        correlation_id: ids.commandId,
        occurred_at: clock(),
        customer_id: caller.customerId,
        instance_id: instance.id,
        instance_name: instance.managerInstance,
        message_id: ids.messageId,
        phone,
        message: body.message,
        message_purpose: body.message_purpose,
        source: 'api',
        idempotency_key: idempotencyKey ?? null,
      };

      const outcome = deps.replies.wait(ids.commandId, deps.deadlineMs, { checkStoreFirst: replay !== null });
      // A retry re-appends its command only when the first append looks lost: old enough and
      // still undecided. (The policy stage would re-emit a decided command's decision, and the
      // pipeline would run again for nothing.) A re-append of an undecided one is safe: the policy
      // stage decides a command id once.
      if (!replay || (replay.ageMs > deps.reappendAfterMs && !(await commandDecided(deps.pool, ids.commandId)))) {
        await deps.kafka.send([await deps.codec.encode('SendRequested', command)]);
      }
      const response = toResponse(await outcome, ids);
      request.log.info(
        { correlation_id: ids.commandId, message_id: ids.messageId, replay: replay !== null, result: response instanceof ApiError ? response.code : response.status },
        'send answered',
      );
      if (response instanceof ApiError) throw response;
      return reply.code(200).send(response);
    },
  );
}
