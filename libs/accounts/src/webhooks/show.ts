import { sql, z, type Queryable } from '@gw/db';
import { iso, requireEndpoint, type CustomerScope } from './endpoint-store.ts';

export const DELIVERY_STATES = ['pending', 'in_flight', 'delivered', 'failed'] as const;
export const DeliveryState = z.enum(DELIVERY_STATES);
export type DeliveryState = z.infer<typeof DeliveryState>;

const StateCount = z.object({ state: DeliveryState, count: z.number() });

/** The configuration and its health, with delivery counts by state; the signing secret is never shown here. */
export async function showWebhook(pool: Queryable, instanceId: string, scope: CustomerScope = {}) {
  const endpoint = await requireEndpoint(pool, instanceId, scope);
  const counted = await pool.any(sql.type(StateCount)`
    SELECT state, count(*)::int AS count FROM webhook_deliveries WHERE instance_id = ${instanceId} GROUP BY state`);
  // Every state is listed, zeros included, so scripts can read any of them.
  const deliveries = Object.fromEntries(DELIVERY_STATES.map((state) => [state, counted.find((r) => r.state === state)?.count ?? 0])) as Record<DeliveryState, number>;
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

export type WebhookSummary = Awaited<ReturnType<typeof showWebhook>>;
