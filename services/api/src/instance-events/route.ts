import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { BatchedLookup, GroupCommit } from '@gw/batching';
import { ApiError } from '@gw/contract';
import { sql, z, type Pool, type Queryable } from '@gw/db';
import { newEventId, type EventCodec } from '@gw/events';
import { DEFAULT_INSTANCE_EVENT_BODY_LIMIT_BYTES } from '@gw/config';
import { envelopeProblem, withoutBinaryFields } from '@gw/evolution';
import type { KafkaClient } from '@gw/kafka';
import { secretMatches } from '@gw/security';

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

/**
 * POST /integrations/instances/{instance_id}/events/{token}: the instance manager's webhook.
 * The token is generated per instance (gatewayctl instance webhook-url) and only its hash is
 * stored; it is compared in constant time, an unknown instance costing the same as a wrong token.
 * Envelopes are deduplicated by a digest of the exact bytes, then appended as
 * InstanceEventReceived on the customer's key, without the manager's apikey.
 */
export async function instanceEventsRoutes(app: FastifyInstance, deps: InstanceEventsDeps): Promise<void> {
  const clock = deps.clock ?? Date.now;
  const instances = instanceLookup(deps.pool);
  const claims = ingestClaims(deps.pool);
  const bodyLimit = deps.bodyLimitBytes ?? DEFAULT_INSTANCE_EVENT_BODY_LIMIT_BYTES;
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit }, (_request, body, done) => done(null, body));

  const handler = async (request: { params: { instance_id: string; token: string }; body: Buffer | undefined; log: FastifyInstance['log']; trace: FastifyRequest['trace'] }) => {
    const instance = INSTANCE_ID.test(request.params.instance_id) ? await instances.get(request.params.instance_id) : undefined;
    if (!secretMatches(request.params.token, instance?.webhook_token_hash ?? null) || !instance) throw unauthenticated();

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
    const problem = envelopeProblem(recorded);
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
    description: 'Authenticated by the per-instance token in the path (set on the manager by gatewayctl instance webhook-url). Duplicates of an envelope are acknowledged once more and not recorded again.',
    hide: true,
  };
  app.post<{ Params: { instance_id: string; token: string }; Body: Buffer | undefined }>(
    '/integrations/instances/:instance_id/events/:token',
    { bodyLimit, validatorCompiler: () => () => true, schema },
    async (request) => handler(request),
  );
  // Evolution's webhookByEvents appends the event name (e.g. /messages-upsert) to the URL.
  app.post<{ Params: { instance_id: string; token: string; event_path: string }; Body: Buffer | undefined }>(
    '/integrations/instances/:instance_id/events/:token/:event_path',
    { bodyLimit, validatorCompiler: () => () => true, schema },
    async (request) => handler(request),
  );
}
