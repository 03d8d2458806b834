import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
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
  templateText,
} from '@gw/contract';
import { pbxModuleEnabled } from '@gw/accounts';
import { newEventId, type SendDecided } from '@gw/events';
import type { OutgoingRecord } from '@gw/kafka';
import { newId, type SecretBox } from '@gw/security';
import { appendRule, failedRuleDetails, requestSend, type SendDeps } from '@gw/send';
import { claimRequest, forgetExpired, loadIntegration, recordResponse, releaseClaim, useSignature, type PbxIntegration, type PbxResponseRecord } from './pbx-store.ts';
import { EverySoOften, RecentReads } from './recent-reads.ts';
import { PbxRateLimiter } from './rate-limiter.ts';
import { verifyPbxRequest } from './verify-request.ts';

export const PBX_BODY_LIMIT = 256 * 1024;

/** The send path (@gw/send; its reappendAfterMs also applies to events that send nothing), and the PBX's own. */
export interface PbxDeps extends SendDeps {
  box: SecretBox;
  replayWindowSeconds: number;
  /**
   * How long an integration read from Postgres (and its customer's PBX module, once seen on) is
   * used without reading it again (PBX_RECENT_READ_MS; default 0, read on every request): the
   * bound on how late a change (secret rotated, integration disabled, module switched off) takes
   * effect here.
   */
  recentReadMs?: number;
}

/** Expired signatures and body claims are forgotten at most this often per integration. */
const FORGET_EXPIRED_EVERY_MS = 10_000;

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

/** The authenticated body as an event of the contract, or the 400 that says what is wrong with it. */
function parseEvent(raw: Buffer): PbxBody {
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
  return body as PbxBody;
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

/** The answer to a sending event once its message is decided (the delivery is not awaited). */
function decidedAnswer(eventType: string, decision: SendDecided | null): PbxResponseRecord {
  if (!decision) {
    throw new ApiError('internal_error', 'The event was recorded but its message is not decided yet. Retry the same event to get its outcome.', { state: 'pending_decision' });
  }
  if (decision.decision === 'accepted') return processed(eventType, decision.message_id);
  return refusal(decision.error_code ?? 'policy_violation', decision.error_message ?? 'The message was refused by the responsible-messaging policy.', {
    ...failedRuleDetails(decision),
    message_id: decision.message_id,
    log_id: decision.log_id,
  });
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
  const recentReadMs = deps.recentReadMs ?? 0;
  const integrations = new RecentReads<number, PbxIntegration>({ ttlMs: recentReadMs, maxEntries: 10_000 });
  // Only "on" is kept: a module switched on takes effect at once, switched off within recentReadMs.
  const moduleOn = new RecentReads<string, true>({ ttlMs: recentReadMs, maxEntries: 10_000 });
  const housekeeping = new EverySoOften<number>({ everyMs: FORGET_EXPIRED_EVERY_MS, maxEntries: 10_000 });
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: PBX_BODY_LIMIT }, (_request, body, done) => done(null, body));

  /** The integration a request is from, once authenticated (one generic 401) and within its rate (429). */
  const admitted = async (request: FastifyRequest<{ Params: { integration_id: string } }>, raw: Buffer, now: number): Promise<PbxIntegration> => {
    const id = /^\d{1,9}$/.test(request.params.integration_id) ? Number(request.params.integration_id) : null;
    const header = (name: string) => {
      const value = request.headers[name];
      return typeof value === 'string' ? value : undefined;
    };
    const headers = { secret: header('x-chat-gateway-pbx-secret'), timestamp: header('x-chat-gateway-timestamp'), signature: header('x-chat-gateway-signature') };
    const verify = (integration: PbxIntegration | null) => verifyPbxRequest(integration, headers, raw, Math.floor(now / 1000), deps.replayWindowSeconds);
    const read = async () => {
      const integration = id === null ? null : await loadIntegration(deps.pool, deps.box, id);
      if (integration && !integration.disabled) integrations.set(integration.id, integration);
      return integration;
    };
    let integration = id === null ? null : (integrations.get(id) ?? null);
    let verdict = integration ? verify(integration) : { ok: false as const };
    // Not verified against what was read a moment ago (or nothing was): against Postgres now, so
    // a secret changed a moment ago works at once.
    if (!verdict.ok) {
      integration = await read();
      verdict = verify(integration);
    }
    if (!verdict.ok || !integration) throw unauthenticated();
    if (verdict.signature && !(await useSignature(deps.pool, integration.id, verdict.signature))) throw unauthenticated();
    if (housekeeping.due(integration.id)) {
      // Not awaited: nothing this request answers depends on it.
      forgetExpired(deps.pool, integration.id, deps.replayWindowSeconds).catch((error: unknown) =>
        request.log.warn({ integration_id: integration!.id, error: error instanceof Error ? error.message : String(error) }, 'could not forget expired PBX signatures and claims'),
      );
    }
    if (!limiter.take(integration.id, integration.ratePerMinute, now)) {
      throw new ApiError('webhook_rate_limited', 'Too many PBX events for this integration; slow down.', { limit_per_minute: integration.ratePerMinute });
    }
    return integration;
  };

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
      const now = clock();
      const integration = await admitted(request, raw, now);
      const event = parseEvent(raw);
      const plan = planAction(event, integration);

      // A message is checked by the policy engine itself, in order with the module switches. An
      // event that sends nothing is checked against the engine's folded state (a switch made a
      // moment ago may not be folded yet).
      if (plan.action !== 'send' && !moduleOn.get(integration.customerId)) {
        if (!(await pbxModuleEnabled(deps.pool, integration.customerId))) {
          throw new ApiError('module_not_enabled', 'The PBX module is not enabled for this account.', { module: 'pbx' });
        }
        moduleOn.set(integration.customerId, true);
      }

      const dedupeKey = event.external_message_id ? `ext:${event.external_message_id}` : `body:${createHash('sha256').update(raw).digest('hex')}`;
      const ids = { commandId: newId('cmd'), messageId: newId('msg') };
      const held = await claimRequest(deps.pool, integration.id, dedupeKey, ids.commandId, deps.replayWindowSeconds);
      if (held.kind === 'replay') {
        if (held.response) return reply.code(held.response.status).send(held.response.body);
        // A retry whose first request recorded no response: the same command (a fresh message id
        // only matters if it is appended again, i.e. if the first append was lost).
        ids.commandId = held.commandId;
      }
      const claim = held.kind === 'new' ? held : { kind: 'replay' as const, ageMs: held.ageMs };
      // Not appended: give the claim up, so the PBX's retry is taken as new rather than waiting for ever.
      const release = () => releaseClaim(deps.pool, integration.id, dedupeKey, ids.commandId);

      // The event as received, for the record; a sending event is followed by its SendRequested.
      const received = (action: 'send' | 'record' | 'acknowledge'): Promise<OutgoingRecord> =>
        deps.codec.encode('PbxEventReceived', {
          event_id: newEventId(),
          correlation_id: ids.commandId,
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
        // The send path's re-append rule; nothing here is ever decided, so a lost append is simply appended again.
        if (appendRule(claim, deps.reappendAfterMs) !== 'skip') {
          const record = await received(plan.action);
          try {
            await deps.kafka.send([{ ...record, trace: request.trace ?? undefined }]);
          } catch (error) {
            if (claim.kind === 'new') await release().catch(() => undefined);
            throw error;
          }
        }
        response = processed(event.event_type);
      } else {
        // One append, in order on the customer's partition: the event as received, then its send.
        const { progress } = await requestSend(deps, {
          source: 'pbx',
          customerId: integration.customerId,
          instance: { id: integration.instanceId, managerInstance: integration.managerInstance },
          phone: plan.phone,
          message: plan.text,
          purpose: plan.purpose,
          dedupe: { kind: 'claimed', key: dedupeKey, ids, claim, release },
          until: 'decision',
          before: async () => [await received('send')],
          trace: request.trace ?? undefined,
        });
        response = decidedAnswer(event.event_type, progress.decision);
      }
      await recordResponse(deps.pool, integration.id, dedupeKey, response);
      request.log.info({ integration_id: integration.id, correlation_id: ids.commandId, event_type: event.event_type, status: response.status }, 'pbx event answered');
      return reply.code(response.status).send(response.body);
    },
  );
}
