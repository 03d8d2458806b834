import { withTransaction, type Pool } from '@gw/db';
import { CliError } from '../accounts/customers.ts';
import { iso, refuseDisabled, requireEndpoint } from './endpoint-store.ts';
import { DELIVERY_STATES, type DeliveryState } from './show.ts';

export const DEFAULT_DELIVERY_LIMIT = 50;

export function deliveryState(value: string): DeliveryState {
  if (!(DELIVERY_STATES as readonly string[]).includes(value)) throw new CliError(`Unknown delivery state ${value}: use ${DELIVERY_STATES.join(', ')}.`);
  return value as DeliveryState;
}

interface DeliveryRow {
  delivery_id: string;
  event: string;
  state: DeliveryState;
  attempts: number;
  next_attempt_at: Date;
  last_status: number | null;
  last_error: string | null;
  created_at: Date;
}

interface AttemptRow {
  delivery_id: string;
  attempt: number;
  attempted_at: Date;
  status_code: number | null;
  latency_ms: number;
  error: string | null;
  outcome: string;
  next_attempt_at: Date | null;
  response_snippet: string;
}

/** `webhook deliveries`: newest first, each with its attempts in the order they were made. */
export async function listDeliveries(pool: Pool, input: { instanceId: string; state?: DeliveryState; limit?: number }) {
  await requireEndpoint(pool, input.instanceId);
  const limit = input.limit ?? DEFAULT_DELIVERY_LIMIT;
  if (limit < 1) throw new CliError('--limit must be at least 1.');
  const deliveries = await pool.query<DeliveryRow>(
    `SELECT delivery_id, event, state, attempts, next_attempt_at, last_status, last_error, created_at
       FROM webhook_deliveries
      WHERE instance_id = $1 AND ($2::text IS NULL OR state = $2)
      ORDER BY created_at DESC, delivery_id DESC
      LIMIT $3`,
    [input.instanceId, input.state ?? null, limit],
  );
  const attempts = await pool.query<AttemptRow>(
    `SELECT delivery_id, attempt, attempted_at, status_code, latency_ms, error, outcome, next_attempt_at, response_snippet
       FROM webhook_attempts WHERE delivery_id = ANY($1::text[])
      ORDER BY delivery_id, attempt, id`,
    [deliveries.rows.map((d) => d.delivery_id)],
  );
  return deliveries.rows.map((d) => ({
    delivery_id: d.delivery_id,
    event: d.event,
    state: d.state,
    attempts: d.attempts,
    next_attempt_at: iso(d.next_attempt_at),
    last_status: d.last_status,
    last_error: d.last_error,
    created_at: iso(d.created_at),
    attempts_log: attempts.rows
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

/**
 * `webhook resend`: the delivery starts a new retry round, due now. `attempts` keeps counting, so
 * the receiver sees a higher X-Chat-Gateway-Attempt and the same delivery id. A delivery being
 * sent right now is refused rather than yanked from under the worker (its result would be lost).
 */
export async function resendDelivery(pool: Pool, deliveryId: string) {
  return withTransaction(pool, async (client) => {
    const found = await client.query<{ instance_id: string; state: DeliveryState; lease_until: Date | null }>(
      'SELECT instance_id, state, lease_until FROM webhook_deliveries WHERE delivery_id = $1 FOR UPDATE',
      [deliveryId],
    );
    const delivery = found.rows[0];
    if (!delivery) throw new CliError(`No webhook delivery ${deliveryId}.`);
    if (delivery.state === 'in_flight') {
      const until = delivery.lease_until ? ` (claimed until ${delivery.lease_until.toISOString()})` : '';
      throw new CliError(`Delivery ${deliveryId} is being delivered right now${until}; resend it once this attempt is recorded.`);
    }
    const endpoint = await requireEndpoint(client, delivery.instance_id);
    refuseDisabled(endpoint, 'a resend');
    const updated = await client.query<{ event: string; state: DeliveryState; attempts: number; next_attempt_at: Date }>(
      `UPDATE webhook_deliveries
          SET state = 'pending', next_attempt_at = now(), round_attempts = 0, lease_until = NULL, updated_at = now()
        WHERE delivery_id = $1
        RETURNING event, state, attempts, next_attempt_at`,
      [deliveryId],
    );
    const row = updated.rows[0]!;
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
