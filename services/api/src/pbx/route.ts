import { createHash } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { Ajv, type ErrorObject } from 'ajv';
import {
  ApiError,
  ApiErrorSchema,
  ERROR_STATUS,
  isErrorCode,
  normalizePhone,
  PbxWebhookRequestSchema,
  PbxWebhookResponseSchema,
  ref,
  type PbxEventType,
  findUnsafeText,
  SAFE_TEXT_RULE,
  TEMPLATE_EVENTS,
} from '@gw/contract';
import type { Pool } from '@gw/db';
import { newEventId, type EventCodec, type SendRequested } from '@gw/events';
import type { KafkaClient } from '@gw/kafka';
import { newId, type SecretBox } from '@gw/security';
import type { ReplyWaiter } from '../send-message/reply-router.ts';
import { claimRequest, loadIntegration, pbxModuleEnabled, recordResponse, releaseClaim, useSignature, type PbxIntegration, type PbxResponseRecord } from './pbx-store.ts';
import { commandDecided } from '../send-message/progress-store.ts';
import { PbxRateLimiter } from './rate-limiter.ts';
import { templateText } from './template-text.ts';
import { verifyPbxRequest } from './verify-request.ts';

export const PBX_BODY_LIMIT = 256 * 1024;

export interface PbxDeps {
  pool: Pool;
  kafka: KafkaClient;
  codec: EventCodec;
  replies: ReplyWaiter;
  box: SecretBox;
  deadlineMs: number;
  replayWindowSeconds: number;
  /** A retried event whose first request recorded no response re-appends once its claim is this old (IDEMPOTENT_REAPPEND_AFTER_MS). */
  reappendAfterMs: number;
  clock?: () => number;
}

type PbxBody = { event_type: PbxEventType } & Partial<Record<'to' | 'customer_phone' | 'message_text' | 'message_purpose' | 'conversation_id' | 'external_message_id' | 'agent_extension' | 'queue' | 'call_time', string>>;

const unauthenticated = () => new ApiError('invalid_pbx_webhook', 'The PBX webhook request could not be authenticated.', {});

const ajv = new Ajv({ allErrors: true, strict: false });
const validatePbxBody = ajv.compile(PbxWebhookRequestSchema);

function validationError(): ApiError {
  const issue = validatePbxBody.errors?.[0];
  const field = issue?.keyword === 'required' ? String(issue.params.missingProperty) : (issue?.instancePath ?? '').replace(/^\//, '');
  // Every text pattern of the contract is the safe-text rule; its regex would mean nothing to a reader.
  const problem = issue?.keyword === 'pattern' ? `must be text ${SAFE_TEXT_RULE}` : (issue?.message ?? 'is invalid');
  return new ApiError('validation_error', `Invalid PBX event: ${field || 'the body'} ${problem}.`, {
    field: field || null,
    rule: issue?.keyword ?? null,
    errors: (validatePbxBody.errors ?? []).map((e: ErrorObject) => ({ field: e.keyword === 'required' ? String(e.params.missingProperty) : e.instancePath.replace(/^\//, ''), rule: e.keyword, message: e.message })),
  }, 400);
}

function phoneOf(value: string | undefined, field: 'to' | 'customer_phone'): string {
  if (value === undefined || value.trim() === '') {
    throw new ApiError('missing_phone', `This event sends a message and needs "${field}".`, { field });
  }
  const phone = normalizePhone(value);
  if (!phone) throw new ApiError('validation_error', `${field} must be a phone number in international format.`, { field, rule: 'international_format' }, 400);
  return phone;
}

/** What the event does: send a message (and what), record it, or just acknowledge it. */
function planAction(body: PbxBody, integration: PbxIntegration): { action: 'send'; phone: string; text: string; purpose: string } | { action: 'record' | 'acknowledge' } {
  if (body.event_type === 'test') return { action: 'acknowledge' };
  if (body.event_type === 'outbound_message') {
    const phone = phoneOf(body.to, 'to');
    if (!body.message_text || body.message_text.trim() === '') {
      throw new ApiError('missing_message_text', 'outbound_message needs "message_text".', { field: 'message_text' });
    }
    return { action: 'send', phone, text: body.message_text, purpose: body.message_purpose ?? integration.defaultPurpose };
  }
  if ((TEMPLATE_EVENTS as readonly string[]).includes(body.event_type) && integration.enabledEvents.includes(body.event_type)) {
    const phone = phoneOf(body.customer_phone, 'customer_phone');
    const text = templateText(integration.templates, body.event_type, { customer_phone: phone, agent_extension: body.agent_extension, queue: body.queue, call_time: body.call_time });
    return { action: 'send', phone, text, purpose: body.message_purpose ?? integration.defaultPurpose };
  }
  return { action: 'record' };
}

function processed(eventType: string, messageId?: string): PbxResponseRecord {
  return { status: 200, body: { success: true, status: 'processed', event_type: eventType, action: 'received', ...(messageId ? { message_id: messageId } : {}) } };
}

/** A policy refusal of a PBX message is a 403, whatever the rule; the policy's own code is in details. */
function refusal(code: string, message: string, details: Record<string, unknown>): PbxResponseRecord {
  const error = isErrorCode(code) && ERROR_STATUS[code] === 403 ? code : 'policy_violation';
  return { status: 403, body: { success: false, error, message, details: { ...details, policy_error: code } } };
}

const errorResponses = Object.fromEntries([400, 401, 403, 413, 429, 500].map((status) => [status, { ...ref(ApiErrorSchema), description: 'ApiError' }]));

/**
 * POST /integrations/pbx/webhook/{integration_id}. The body is read raw (at most 256 KB, refused
 * with 413 beyond it without buffering more) so the HMAC covers the exact bytes; checks run in the
 * documented order: size, pre-authentication (one generic 401), rate, payload, policy.
 */
export async function pbxRoutes(app: FastifyInstance, deps: PbxDeps): Promise<void> {
  const clock = deps.clock ?? Date.now;
  const limiter = new PbxRateLimiter();
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: PBX_BODY_LIMIT }, (_request, body, done) => done(null, body));

  app.post<{ Params: { integration_id: string }; Body: Buffer | undefined }>(
    '/integrations/pbx/webhook/:integration_id',
    {
      bodyLimit: PBX_BODY_LIMIT,
      // The raw body is authenticated before it is parsed and validated (against the same schema).
      validatorCompiler: () => () => true,
      schema: {
        summary: 'Receive a PBX middleware event',
        description:
          'Authenticated by X-Chat-Gateway-PBX-Secret and, when HMAC signing is configured, X-Chat-Gateway-Timestamp and X-Chat-Gateway-Signature (sha256=<hex> or <hex>, HMAC-SHA256 over timestamp + "." + raw body). Body at most 256 KB. Pre-authentication failures all answer 401 invalid_pbx_webhook. missing_phone and missing_message_text answer 400.',
        params: { type: 'object', properties: { integration_id: { type: 'integer' } }, required: ['integration_id'] },
        headers: {
          type: 'object',
          properties: {
            'x-chat-gateway-pbx-secret': { type: 'string' },
            'x-chat-gateway-timestamp': { type: 'string' },
            'x-chat-gateway-signature': { type: 'string' },
          },
        },
        body: ref(PbxWebhookRequestSchema),
        response: { 200: { ...ref(PbxWebhookResponseSchema), description: 'PbxWebhookResponse' }, ...errorResponses },
      },
    },
    async (request, reply) => {
      const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
      const id = /^\d{1,9}$/.test(request.params.integration_id) ? Number(request.params.integration_id) : null;
      const integration = id === null ? null : await loadIntegration(deps.pool, deps.box, id);
      const header = (name: string) => {
        const value = request.headers[name];
        return typeof value === 'string' ? value : undefined;
      };
      const now = clock();
      const verdict = verifyPbxRequest(
        integration,
        { secret: header('x-chat-gateway-pbx-secret'), timestamp: header('x-chat-gateway-timestamp'), signature: header('x-chat-gateway-signature') },
        raw,
        Math.floor(now / 1000),
        deps.replayWindowSeconds,
      );
      if (!verdict.ok || !integration) throw unauthenticated();
      if (verdict.signature && !(await useSignature(deps.pool, integration.id, verdict.signature, deps.replayWindowSeconds))) throw unauthenticated();

      if (!limiter.take(integration.id, integration.ratePerMinute, now)) {
        throw new ApiError('webhook_rate_limited', 'Too many PBX events for this integration; slow down.', { limit_per_minute: integration.ratePerMinute });
      }

      let body: unknown;
      try {
        body = JSON.parse(raw.toString('utf8'));
      } catch {
        throw new ApiError('invalid_json', 'The request body is not valid JSON.', {});
      }
      if (!validatePbxBody(body)) throw validationError();
      // Fields of the PBX's own (allowed beside the contract's) are recorded with the event: the same rule for them.
      const unsafe = findUnsafeText(body, PBX_BODY_LIMIT);
      if (unsafe) throw new ApiError('validation_error', `Invalid PBX event: ${unsafe.path} ${unsafe.problem}.`, { field: unsafe.path, rule: 'safe_text' }, 400);
      const event = body as PbxBody;
      const plan = planAction(event, integration);

      // A message is checked by the policy engine itself, in order with the module switches. An
      // event that sends nothing is checked against the engine's folded state (a switch made a
      // moment ago may not be folded yet).
      if (plan.action !== 'send' && !(await pbxModuleEnabled(deps.pool, integration.customerId))) {
        throw new ApiError('module_not_enabled', 'The PBX module is not enabled for this account.', { module: 'pbx' });
      }

      const dedupeKey = event.external_message_id ? `ext:${event.external_message_id}` : `body:${createHash('sha256').update(raw).digest('hex')}`;
      let commandId = newId('cmd');
      const messageId = newId('msg');
      const claim = await claimRequest(deps.pool, integration.id, dedupeKey, commandId, deps.replayWindowSeconds);
      if (claim.kind === 'replay') {
        if (claim.response) return reply.code(claim.response.status).send(claim.response.body);
        commandId = claim.commandId;
      }
      // Append what the event implies: for a new claim, and for a retry whose first request
      // recorded no response and looks lost (its process may have died between claim and append):
      // old enough, and, for a send, still undecided (the policy stage decides a command id once).
      const append =
        claim.kind === 'new' ||
        (claim.ageMs > deps.reappendAfterMs && (plan.action !== 'send' || !(await commandDecided(deps.pool, commandId))));
      const appendOrRelease = async (records: Parameters<KafkaClient['send']>[0]) => {
        try {
          // The records continue the request's trace (a send's, through policy and delivery).
          await deps.kafka.send(records.map((record) => ({ ...record, trace: request.trace ?? undefined })));
        } catch (error) {
          // Not appended: give the claim up, so the PBX's retry is taken as new rather than waiting for ever.
          if (claim.kind === 'new') await releaseClaim(deps.pool, integration.id, dedupeKey, commandId).catch(() => undefined);
          throw error;
        }
      };

      // The event as received, for the record; a sending event is followed by its SendRequested.
      const receivedRecord = (action: 'send' | 'record' | 'acknowledge') =>
        deps.codec.encode('PbxEventReceived', {
          event_id: newEventId(),
          correlation_id: commandId,
          occurred_at: now,
          customer_id: integration.customerId,
          instance_id: integration.instanceId,
          integration_id: integration.id,
          event_type: event.event_type,
          payload: raw.toString('utf8'),
          action,
        });
      let response: PbxResponseRecord;
      if (plan.action !== 'send') {
        if (append) await appendOrRelease([await receivedRecord(plan.action)]);
        response = processed(event.event_type);
      } else {
        const waiting = deps.replies.wait(commandId, deps.deadlineMs, { until: 'decision', checkStoreFirst: claim.kind === 'replay' });
        if (append) {
          const command: SendRequested = {
            event_id: newEventId(),
            correlation_id: commandId,
            occurred_at: now,
            customer_id: integration.customerId,
            instance_id: integration.instanceId,
            instance_name: integration.managerInstance,
            message_id: messageId,
            phone: plan.phone,
            message: plan.text,
            message_purpose: plan.purpose,
            source: 'pbx',
            idempotency_key: dedupeKey,
          };
          const received = await receivedRecord('send');
          // One append, in order on the customer's partition: the event as received, then its send.
          await appendOrRelease([received, await deps.codec.encode('SendRequested', command)]);
        }
        const { decision } = await waiting;
        if (!decision) {
          throw new ApiError('internal_error', 'The event was recorded but its message is not decided yet. Retry the same event to get its outcome.', { state: 'pending_decision' });
        }
        if (decision.decision === 'accepted') {
          response = processed(event.event_type, decision.message_id);
        } else {
          const failed = decision.reasons.find((r) => r.outcome === 'fail');
          const details = failed?.detail ? (JSON.parse(failed.detail) as Record<string, unknown>) : { rule: failed?.rule ?? null };
          response = refusal(decision.error_code ?? 'policy_violation', decision.error_message ?? 'The message was refused by the responsible-messaging policy.', {
            ...details,
            message_id: decision.message_id,
            log_id: decision.log_id,
          });
        }
      }
      await recordResponse(deps.pool, integration.id, dedupeKey, response);
      request.log.info({ integration_id: integration.id, correlation_id: commandId, event_type: event.event_type, status: response.status }, 'pbx event answered');
      return reply.code(response.status).send(response.body);
    },
  );
}
