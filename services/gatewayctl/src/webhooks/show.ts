import type { Pool } from '@gw/db';
import { iso, requireEndpoint } from './endpoint-store.ts';

export const DELIVERY_STATES = ['pending', 'in_flight', 'delivered', 'failed'] as const;
export type DeliveryState = (typeof DELIVERY_STATES)[number];

/** `webhook show`: the configuration and its health; the signing secret is never shown here. */
export async function showWebhook(pool: Pool, instanceId: string) {
  const endpoint = await requireEndpoint(pool, instanceId);
  const counted = await pool.query<{ state: DeliveryState; count: number }>(
    'SELECT state, count(*)::int AS count FROM webhook_deliveries WHERE instance_id = $1 GROUP BY state',
    [instanceId],
  );
  // Every state is listed, zeros included, so scripts can read any of them.
  const deliveries = Object.fromEntries(DELIVERY_STATES.map((state) => [state, counted.rows.find((r) => r.state === state)?.count ?? 0]));
  return {
    instance_id: endpoint.instance_id,
    destination_url: endpoint.destination_url,
    events: endpoint.events,
    status: endpoint.status,
    disabled_reason: endpoint.disabled_reason,
    disabled_at: iso(endpoint.disabled_at),
    failing_since: iso(endpoint.failing_since),
    consecutive_failures: endpoint.consecutive_failures,
    last_success_at: iso(endpoint.last_success_at),
    secret_rotated_at: iso(endpoint.secret_rotated_at),
    deliveries,
  };
}
