import type { FastifyInstance } from 'fastify';
import { ApiError, ApiErrorSchema, normalizePhone, ref, SendMessageRequestSchema, SendMessageSuccessSchema } from '@gw/contract';
import { IDEMPOTENCY_KEY_PATTERN, requestHash, requestSend, toResponse, type SendDeps } from '@gw/send';
import { authenticate } from '../plugins/auth.ts';
import { requireJson } from '../plugins/require-json.ts';
import { instanceFinder } from './instances.ts';

/** The send path (@gw/send) is all this route needs. */
export type SendMessageDeps = SendDeps;

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

      const idempotencyKey = request.headers['idempotency-key'];
      const { ids, replay, progress } = await requestSend(deps, {
        customerId: caller.customerId,
        instance,
        phone,
        message: body.message,
        purpose: body.message_purpose,
        trace: request.trace ?? undefined,
        ...(idempotencyKey !== undefined ? { dedupe: { kind: 'idempotency-key' as const, key: idempotencyKey, requestHash: requestHash(body) } } : {}),
      });
      const response = toResponse(progress, ids);
      request.log.info(
        { correlation_id: ids.commandId, message_id: ids.messageId, replay, result: response instanceof ApiError ? response.code : response.status },
        'send answered',
      );
      if (response instanceof ApiError) throw response;
      return reply.code(200).send(response);
    },
  );
}
