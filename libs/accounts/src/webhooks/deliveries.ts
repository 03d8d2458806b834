import { readSnapshot, sql, z, type Pool, type Queryable } from '@gw/db';
import { iso, refuseDisabled, requireEndpoint, type CustomerScope } from './endpoint-store.ts';
import { WebhookError } from './refusals.ts';
import { DeliveryState } from './show.ts';

export const DEFAULT_DELIVERY_LIMIT = 50;

const DeliveryRow = z.object({
  delivery_id: z.string(),
  event: z.string(),
  state: DeliveryState,
  attempts: z.number(),
  next_attempt_at: z.date(),
  last_status: z.number().nullable(),
  last_error: z.string().nullable(),
  created_at: z.date(),
});

/** A row of webhook_attempts, as the webhooks service records each attempt. */
export const AttemptRow = z.object({
  delivery_id: z.string(),
  attempt: z.number(),
  attempted_at: z.date(),
  status_code: z.number().nullable(),
  latency_ms: z.number(),
  error: z.string().nullable(),
  outcome: z.string(),
  next_attempt_at: z.date().nullable(),
  response_snippet: z.string(),
});

const LockedDelivery = z.object({ instance_id: z.string(), state: DeliveryState, lease_until: z.date().nullable() });
const ResentDelivery = DeliveryRow.pick({ event: true, state: true, attempts: true, next_attempt_at: true });

export interface ListDeliveriesInput {
  instanceId: string;
  state?: DeliveryState;
  limit?: number;
  /** Only this customer's instance (see CustomerScope). */
  customerId?: string;
}

/**
 * Recent deliveries, newest first, each with every attempt in the order they were made. Read in
 * one snapshot: the worker records an attempt and its delivery's new state together, and two
 * plain reads could show the attempt delivered beside a delivery still being sent.
 */
export function listDeliveries(pool: Pool, input: ListDeliveriesInput) {
  return readSnapshot(pool, (tx) => readDeliveries(tx, input));
}

/** listDeliveries inside a snapshot the caller holds (readSnapshot), to read other tables in the same one. */
export async function readDeliveries(pool: Queryable, input: ListDeliveriesInput) {
  await requireEndpoint(pool, input.instanceId, { customerId: input.customerId });
  const limit = input.limit ?? DEFAULT_DELIVERY_LIMIT;
  if (!Number.isInteger(limit) || limit < 1) throw new WebhookError('invalid', 'invalid_input', 'The limit must be a whole number of at least 1.');
  const state = input.state ?? null;
  const deliveries = await pool.any(sql.type(DeliveryRow)`
    SELECT delivery_id, event, state, attempts, next_attempt_at, last_status, last_error, created_at
      FROM webhook_deliveries
     WHERE instance_id = ${input.instanceId} AND (${state}::text IS NULL OR state = ${state})
     ORDER BY created_at DESC, delivery_id DESC
     LIMIT ${limit}`);
  const attempts = await pool.any(sql.type(AttemptRow)`
    SELECT delivery_id, attempt, attempted_at, status_code, latency_ms, error, outcome, next_attempt_at, response_snippet
      FROM webhook_attempts WHERE delivery_id = ANY(${sql.array(deliveries.map((d) => d.delivery_id), 'text')})
     ORDER BY delivery_id, attempt, id`);
  return deliveries.map((d) => ({
    delivery_id: d.delivery_id,
    event: d.event,
    state: d.state,
    attempts: d.attempts,
    next_attempt_at: iso(d.next_attempt_at),
    last_status: d.last_status,
    last_error: d.last_error,
    created_at: iso(d.created_at),
    attempts_log: attempts
      .filter((a) => a.delivery_id === d.delivery_id)
      .map((a) => ({
        attempt: a.attempt,
        attempted_at: iso(a.attempted_at),
        status_code: a.status_code,
        latency_ms: a.latency_ms,
        error: a.error,
        outcome: a.outcome,
        next_attempt_at: iso(a.next_attempt_at),
        response_snippet: a.response_snippet,
      })),
  }));
}

export type ListedDelivery = Awaited<ReturnType<typeof listDeliveries>>[number];

/** Which deliveries a resend may touch: with a customer id, only that customer's; with an instance id, only that instance's. Others are refused as unknown. */
export interface DeliveryScope extends CustomerScope {
  instanceId?: string;
}

/**
 * Starts a new retry round for a delivery, due now. `attempts` keeps counting, so the receiver
 * sees a higher X-Chat-Gateway-Attempt and the same delivery id. A delivery being sent right now
 * is refused rather than yanked from under the worker (its result would be lost).
 */
export async function resendDelivery(pool: Pool, deliveryId: string, scope: DeliveryScope = {}) {
  return pool.transaction(async (tx) => {
    const ofCustomer = scope.customerId === undefined ? sql.fragment`TRUE` : sql.fragment`customer_id = ${scope.customerId}`;
    const ofInstance = scope.instanceId === undefined ? sql.fragment`TRUE` : sql.fragment`instance_id = ${scope.instanceId}`;
    const delivery = await tx.maybeOne(sql.type(LockedDelivery)`
      SELECT instance_id, state, lease_until FROM webhook_deliveries WHERE delivery_id = ${deliveryId} AND ${ofCustomer} AND ${ofInstance} FOR UPDATE`);
    if (!delivery) throw new WebhookError('not_found', 'no_delivery', `No webhook delivery ${deliveryId}.`);
    if (delivery.state === 'in_flight') {
      const until = delivery.lease_until ? ` (claimed until ${delivery.lease_until.toISOString()})` : '';
      throw new WebhookError('conflict', 'in_flight', `Delivery ${deliveryId} is being delivered right now${until}; resend it once this attempt is recorded.`, { instanceId: delivery.instance_id });
    }
    const endpoint = await requireEndpoint(tx, delivery.instance_id, { customerId: scope.customerId });
    refuseDisabled(endpoint, 'a resend');
    const row = await tx.one(sql.type(ResentDelivery)`
      UPDATE webhook_deliveries
         SET state = 'pending', next_attempt_at = now(), round_attempts = 0, lease_until = NULL, updated_at = now()
       WHERE delivery_id = ${deliveryId}
       RETURNING event, state, attempts, next_attempt_at`);
    return {
      delivery_id: deliveryId,
      instance_id: delivery.instance_id,
      event: row.event,
      state: row.state,
      attempts: row.attempts,
      next_attempt_at: iso(row.next_attempt_at),
      // A paused endpoint holds it until resumed.
      endpoint_status: endpoint.status,
    };
  });
}
