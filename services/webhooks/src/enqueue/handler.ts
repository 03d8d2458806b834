import { sql, z } from '@gw/db';
import type { Runtime, StageHandler } from '@gw/runtime';
import { traceParentOf } from '@gw/tracing';
import { deliveryIdFor } from '@gw/webhooks';

const Subscriber = z.object({ instance_id: z.string(), customer_id: z.string(), events: z.array(z.string()) });
type Subscriber = z.infer<typeof Subscriber>;

/** Endpoints that take new deliveries: active ones, and paused ones (held until resumed). */
async function subscribers(runtime: Runtime, instanceIds: string[]): Promise<Map<string, Subscriber>> {
  if (instanceIds.length === 0) return new Map();
  const rows = await runtime.pool.any(sql.type(Subscriber)`
    SELECT instance_id, customer_id, events FROM webhook_endpoints
     WHERE instance_id = ANY(${sql.array(instanceIds, 'text')}) AND status <> 'disabled'`);
  return new Map(rows.map((r) => [r.instance_id, r]));
}

/**
 * gateway-events in, one pending delivery per (event, subscribed endpoint) out, in Postgres.
 * The insert is idempotent on (event id, instance id), so a redelivered batch adds nothing; the
 * stage produces no records, and its offsets commit only after the insert. Each row keeps the
 * traceparent of its event's span, so the worker's post continues the trace.
 */
export function enqueueGatewayEvents(runtime: Runtime, onQueued: (count: number) => void): StageHandler<'GatewayEventEmitted'> {
  const { metrics } = runtime;
  return async (batch) => {
    const events = batch.map(({ event, trace }) => ({ ...event.payload, traceParent: trace ? traceParentOf(trace) : null }));
    const endpoints = await subscribers(runtime, [...new Set(events.map((e) => e.instance_id))]);
    const queued = events.filter((e) => endpoints.get(e.instance_id)?.events.includes(e.event));
    if (queued.length > 0) {
      const now = new Date().toISOString();
      const rows = queued.map((e) => [deliveryIdFor(e.event_id, e.instance_id), e.event_id, e.instance_id, e.customer_id, e.event, e.payload, e.occurred_at, e.traceParent]);
      await runtime.pool.query(sql.typeAlias('void')`
        INSERT INTO webhook_deliveries (delivery_id, event_id, instance_id, customer_id, event, body, occurred_at, state, next_attempt_at, trace_parent)
        SELECT d, e, i, c, n, b, to_timestamp(o / 1000.0), 'pending', ${now}::timestamptz, tp
          FROM ${sql.unnest(rows, ['text', 'text', 'text', 'text', 'text', 'text', 'int8', 'text'])} AS t(d, e, i, c, n, b, o, tp)
        ON CONFLICT (event_id, instance_id) DO NOTHING`);
      onQueued(queued.length);
    }
    metrics.eventsProcessed.inc({ group: 'webhook-enqueue', topic: 'gateway-events', outcome: 'queued' }, queued.length);
    metrics.eventsProcessed.inc({ group: 'webhook-enqueue', topic: 'gateway-events', outcome: 'not_subscribed' }, events.length - queued.length);
    return [];
  };
}
