import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { BatchedLookup, GroupCommit } from '@gw/batching';
import { ApiError } from '@gw/contract';
import { sql, z, type Pool, type Queryable } from '@gw/db';
import { newEventId, type EventCodec } from '@gw/events';
import { DEFAULT_INSTANCE_EVENT_BODY_LIMIT_BYTES, DEFAULT_INSTANCE_EVENT_RATE } from '@gw/config';
import { envelopeProblem, JidParseCache, withoutBinaryFields } from '@gw/evolution';
import type { KafkaClient } from '@gw/kafka';
import { secretMatches } from '@gw/security';
import { InstanceEventRateLimit } from './rate-limit.ts';

export interface InstanceEventsDeps {
  pool: Pool;
  kafka: KafkaClient;
  codec: EventCodec;
  clock?: () => number;
  /**
   * Evolution posts media as base64 when configured (config api.instanceEventBodyLimitBytes);
   * more than this is refused with 413. Its bytes are dropped before the envelope is checked and recorded.
   */
  bodyLimitBytes?: number;
  /** Per instance (config api.instanceEventRatePerSecond / instanceEventBurst). */
  rate?: { perSecond: number; burst: number };
  /** Whether the token is still taken in the path, from instances configured before the header (config api.instanceEventPathTokens). */
  pathTokens?: 'accept' | 'refuse';
}

const InstanceRow = z.object({
  id: z.string(),
  customer_id: z.string(),
  name: z.string(),
  manager_instance: z.string(),
  webhook_token_hash: z.instanceof(Buffer).nullable(),
});
type InstanceRow = z.infer<typeof InstanceRow>;

const unauthenticated = () => new ApiError('invalid_api_key', 'The instance event could not be authenticated.', {}, 401);

const INSTANCE_ID = /^[A-Za-z0-9_-]{1,64}$/;

/** Instances by id; concurrent webhooks share one query (nothing cached: a rotated token counts at once). */
function instanceLookup(pool: Queryable): BatchedLookup<string, InstanceRow> {
  return new BatchedLookup(async (ids) => {
    const rows = await pool.any(sql.type(InstanceRow)`
      SELECT id, customer_id, name, manager_instance, webhook_token_hash FROM instances WHERE id = ANY(${sql.array(ids, 'text')})`);
    return new Map(rows.map((row) => [row.id, row]));
  });
}

const ClaimedEvent = z.object({ event_id: z.string() });

interface Claim {
  instanceId: string;
  digest: string;
  eventId: string;
}

/**
 * Claims envelopes by (instance, digest): true for the first claim of each, false for a duplicate.
 * Concurrent webhooks are claimed together in one statement (one commit); of two copies in one
 * batch the first wins.
 */
function ingestClaims(pool: Queryable): GroupCommit<Claim, boolean> {
  return new GroupCommit<Claim, boolean>(async (claims) => {
    const first = new Map<string, Claim>();
    for (const claim of claims) if (!first.has(`${claim.instanceId} ${claim.digest}`)) first.set(`${claim.instanceId} ${claim.digest}`, claim);
    const unique = [...first.values()];
    const rows = await pool.any(sql.type(ClaimedEvent)`
      INSERT INTO instance_event_ingest (instance_id, digest, event_id)
      SELECT * FROM ${sql.unnest(unique.map((c) => [c.instanceId, c.digest, c.eventId]), ['text', 'text', 'text'])}
      ON CONFLICT DO NOTHING RETURNING event_id`);
    const claimed = new Set(rows.map((r) => r.event_id));
    return claims.map((claim) => claimed.has(claim.eventId));
  });
}

/** `Authorization: Bearer <token>`: the header gatewayctl instance webhook-url has the manager send. */
const BEARER = /^Bearer ([A-Za-z0-9_-]{1,128})$/;

/** The URL with everything after /events hidden (a token, in the older form). */
export const withoutPathToken = (url: string): string => url.replace(/(\/events)\/.*$/s, '$1/[redacted]');

type IngestParams = { instance_id: string; segment?: string; token?: string; event_path?: string };

/**
 * POST /integrations/instances/{instance_id}/events: the instance manager's webhook, with the
 * instance's token in `Authorization: Bearer` (set as the webhook's `headers`, which every
 * supported Evolution release posts with each event: webhook.controller.ts emit(), 2.3.6-2.4.0-rc2).
 * A token in the path (/events/{token}, how instances were configured before) is still taken while
 * config api.instanceEventPathTokens is `accept`. The token is generated per instance and only its
 * hash is stored; it is compared in constant time, an unknown instance costing the same as a wrong
 * token. Authenticated events are limited per instance (429 with Retry-After, which the manager
 * retries). Envelopes are deduplicated by a digest of the exact bytes, then appended as
 * InstanceEventReceived on the customer's key, without the manager's apikey.
 */
export async function instanceEventsRoutes(app: FastifyInstance, deps: InstanceEventsDeps): Promise<void> {
  const clock = deps.clock ?? Date.now;
  const instances = instanceLookup(deps.pool);
  const claims = ingestClaims(deps.pool);
  const bodyLimit = deps.bodyLimitBytes ?? DEFAULT_INSTANCE_EVENT_BODY_LIMIT_BYTES;
  const limit = new InstanceEventRateLimit(deps.rate ?? DEFAULT_INSTANCE_EVENT_RATE);
  const pathTokens = deps.pathTokens ?? 'accept';
  /** Instances seen posting with the token in the path: warned about once each (per process). */
  const warnedPathToken = new Set<string>();
  /** The numbers parsed from JIDs checked here: a recipient comes back in every status report of a send. */
  const jids = new JidParseCache();

  /**
   * The token the request presents: the Authorization header's when there is one (then the path
   * after /events is only Evolution's byEvents suffix), else the path's first segment after /events.
   */
  const presentedToken = (request: { headers: FastifyRequest['headers']; params: IngestParams }): { token: string; inPath: boolean } | undefined => {
    const header = request.headers.authorization;
    if (header !== undefined) {
      const match = BEARER.exec(header);
      return match ? { token: match[1]!, inPath: false } : undefined;
    }
    const inPath = request.params.token ?? request.params.segment;
    if (inPath === undefined || pathTokens === 'refuse') return undefined;
    return { token: inPath, inPath: true };
  };
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit }, (_request, body, done) => done(null, body));

  const handler = async (request: FastifyRequest<{ Params: IngestParams; Body: Buffer | undefined }>, reply: FastifyReply) => {
    const presented = presentedToken(request);
    const instance = INSTANCE_ID.test(request.params.instance_id) ? await instances.get(request.params.instance_id) : undefined;
    if (!secretMatches(presented?.token ?? '', instance?.webhook_token_hash ?? null) || !instance || !presented) throw unauthenticated();
    if (presented.inPath && !warnedPathToken.has(instance.id)) {
      warnedPathToken.add(instance.id);
      // The id only: the path holds the token.
      request.log.warn({ instance_id: instance.id }, 'instance events authenticated by a token in the URL; run gatewayctl instance webhook-url to move it to a header');
    }
    // Before anything is claimed: the manager's retry of a refused event must not be a duplicate.
    const waitMs = limit.take(instance.id, clock());
    if (waitMs > 0) {
      void reply.header('retry-after', String(Math.ceil(waitMs / 1000)));
      throw new ApiError('webhook_rate_limited', 'Too many instance events for this instance; slow down.', {});
    }

    const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
    let envelope: unknown;
    try {
      envelope = JSON.parse(raw.toString('utf8'));
    } catch {
      throw new ApiError('invalid_json', 'The request body is not valid JSON.', {});
    }
    if (typeof envelope !== 'object' || envelope === null || Array.isArray(envelope) || typeof (envelope as { event?: unknown }).event !== 'string') {
      throw new ApiError('validation_error', 'An instance event is a JSON object with a string "event".', { field: 'event', rule: 'required' }, 400);
    }
    // Without the manager's apikey, and without media bytes (message.base64, thumbnails: we never
    // read them), before the checks: a caption is not refused for its photo, and the record stays small.
    const { apikey: _secret, ...recorded } = withoutBinaryFields(envelope as Record<string, unknown> & { event: string });
    // Of the bytes as posted: a manager's retry resends the same body (webhook.controller.ts retryWebhookRequest).
    const digest = createHash('sha256').update(raw).digest('hex');
    // Refused before it reaches Kafka, and recorded with its reason (Evolution does not retry a 400).
    const problem = envelopeProblem(recorded, jids);
    if (problem) {
      const event = /^[A-Za-z0-9._-]{1,64}$/.test(recorded.event) ? recorded.event : '(invalid)';
      // In FROM: the void function's row then has no column, as a statement's result should.
      await deps.pool.query(sql.typeAlias('void')`SELECT FROM record_instance_event_rejection(${instance.id}, ${digest}, ${event}, ${problem}, 'ingest')`);
      request.log.warn({ instance_id: instance.id, event, reason: problem }, 'instance event rejected');
      throw new ApiError('validation_error', `The instance event was rejected: ${problem}.`, { reason: problem, digest }, 400);
    }
    const eventId = newEventId();
    if (!(await claims.one({ instanceId: instance.id, digest, eventId }))) {
      request.log.debug({ instance_id: instance.id, event: recorded.event, digest }, 'duplicate instance event ignored');
      return { success: true, status: 'duplicate' };
    }
    try {
      const record = await deps.codec.encode('InstanceEventReceived', {
        event_id: eventId,
        correlation_id: eventId,
        occurred_at: clock(),
        customer_id: instance.customer_id,
        instance_id: instance.id,
        instance_name: instance.name,
        manager_instance: instance.manager_instance,
        event: recorded.event,
        digest,
        payload: JSON.stringify(recorded),
      });
      // The event continues the request's trace through instance-events to the customer's webhook.
      await deps.kafka.send([{ ...record, trace: request.trace ?? undefined }]);
    } catch (error) {
      // Not appended: release the claim so the manager's retry is taken.
      await deps.pool
        .query(sql.typeAlias('void')`DELETE FROM instance_event_ingest WHERE instance_id = ${instance.id} AND digest = ${digest}`)
        .catch(() => undefined);
      throw error;
    }
    return { success: true, status: 'accepted' };
  };

  const schema = {
    summary: 'Receive an instance manager (Evolution API v2) webhook event',
    description:
      'Authenticated by the per-instance token in `Authorization: Bearer` (set on the manager by gatewayctl instance webhook-url); the older form with the token in the path is taken while configured. Duplicates of an envelope are acknowledged once more and not recorded again.',
    hide: true,
  };
  const options = {
    bodyLimit,
    validatorCompiler: () => () => true,
    schema,
    // Should request logging ever be on (fastify's `incoming request`), the path it logs may hold a token.
    logSerializers: { req: (request: FastifyRequest) => ({ method: request.method, url: withoutPathToken(request.url) }) },
  };
  type Route = { Params: IngestParams; Body: Buffer | undefined };
  app.post<Route>('/integrations/instances/:instance_id/events', options, handler);
  // With the header: Evolution's webhookByEvents suffix (e.g. /messages-upsert). Without: the token (older form).
  app.post<Route>('/integrations/instances/:instance_id/events/:segment', options, handler);
  // The older form with webhookByEvents.
  app.post<Route>('/integrations/instances/:instance_id/events/:token/:event_path', options, handler);
}
