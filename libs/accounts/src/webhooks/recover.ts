import { sql, type Queryable } from '@gw/db';
import type { GatewayEventEmitted } from '@gw/events';
import { deliveryIdFor } from '@gw/webhooks';
import { refuseDisabled, requireEndpoint } from './endpoint-store.ts';
import { WebhookError } from './refusals.ts';

/**
 * How far before `since` the log is read. A record is appended after its event occurred, so its
 * append time is normally later than occurred_at; the margin covers clocks that disagree.
 */
export const CLOCK_SKEW_MARGIN_MS = 5 * 60_000;
const FLUSH_EVERY = 500;

/**
 * The gateway's customer events as appended (the gateway-events topic, the system of record).
 * Recovering needs only this much of Kafka; kafkaGatewayEventLog is the implementation.
 */
export interface GatewayEventLog {
  /** The log's name (the topic), named in a refusal. */
  readonly topic: string;
  exists(): Promise<boolean>;
  /**
   * Reads every record appended at or after `fromMs` (append time, Unix ms) up to the log's end
   * as of the call, batch by batch; each record decoded, or null when it is not a gateway event
   * or cannot be decoded (it could not be delivered anyway).
   */
  read(fromMs: number, onBatch: (events: ReadonlyArray<GatewayEventEmitted | null>) => Promise<void>): Promise<void>;
}

export interface RecoverDeps {
  pool: Queryable;
  events: GatewayEventLog;
}

export interface RecoverInput {
  instanceId: string;
  /** Inclusive, compared with each event's own time (occurred_at). */
  since: Date;
  /** Only this customer's instance (see CustomerScope). */
  customerId?: string;
}

export interface RecoverReport {
  instance_id: string;
  since: string;
  /** Records read from the log (all instances), from the start position found for `since`. */
  records_read: number;
  /** This instance's events, of a subscribed kind, that occurred at or after `since` (each event once). */
  scanned: number;
  /** New pending deliveries. */
  queued: number;
  /** Failed deliveries put back to pending for a new retry round. */
  requeued: number;
  /** Deliveries that exist already and are delivered, pending or being delivered: left alone. */
  skipped: number;
}

/**
 * Re-queues what the endpoint missed since a time, from the gateway-events log. Idempotent:
 * delivery ids derive from (event id, instance id), so a second run finds the rows of the first
 * and queues nothing new.
 */
export async function recoverDeliveries(deps: RecoverDeps, input: RecoverInput): Promise<RecoverReport> {
  const endpoint = await requireEndpoint(deps.pool, input.instanceId, { customerId: input.customerId });
  refuseDisabled(endpoint, 'a recover');
  if (!(await deps.events.exists())) throw new WebhookError('refused', 'no_topic', `Topic ${deps.events.topic} does not exist: no gateway events were ever emitted here.`, { instanceId: input.instanceId });

  const subscribed = new Set(endpoint.events);
  const sinceMs = input.since.getTime();
  const report: RecoverReport = { instance_id: input.instanceId, since: input.since.toISOString(), records_read: 0, scanned: 0, queued: 0, requeued: 0, skipped: 0 };
  // The log may hold one event more than once (a replayed emit keeps its event id): count it once.
  const seen = new Set<string>();
  let batch: GatewayEventEmitted[] = [];
  const flush = async () => {
    const events = batch;
    batch = [];
    const outcome = await queueEvents(deps.pool, input.instanceId, events);
    report.queued += outcome.queued;
    report.requeued += outcome.requeued;
    report.skipped += events.length - outcome.queued - outcome.requeued;
  };

  await deps.events.read(sinceMs - CLOCK_SKEW_MARGIN_MS, async (events) => {
    report.records_read += events.length;
    for (const event of events) {
      if (!event || event.instance_id !== input.instanceId || event.occurred_at < sinceMs || !subscribed.has(event.event)) continue;
      if (seen.has(event.event_id)) continue;
      seen.add(event.event_id);
      report.scanned += 1;
      batch.push(event);
    }
    if (batch.length >= FLUSH_EVERY) await flush();
  });
  if (batch.length > 0) await flush();
  return report;
}

/**
 * Inserts pending deliveries for events that have none, and puts failed ones back to pending,
 * due now, in a new round. Rows in any other state are not touched: delivered ones were
 * received, pending and in-flight ones are on their way.
 */
async function queueEvents(db: Queryable, instanceId: string, events: GatewayEventEmitted[]): Promise<{ queued: number; requeued: number }> {
  if (events.length === 0) return { queued: 0, requeued: 0 };
  const rows = events.map((e) => [deliveryIdFor(e.event_id, instanceId), e.event_id, e.customer_id, e.event, e.payload, e.occurred_at]);
  const inserted = await db.query(sql.typeAlias('void')`
    INSERT INTO webhook_deliveries (delivery_id, event_id, instance_id, customer_id, event, body, occurred_at, state, next_attempt_at)
    SELECT d, e, ${instanceId}, c, n, b, to_timestamp(o / 1000.0), 'pending', now()
      FROM ${sql.unnest(rows, ['text', 'text', 'text', 'text', 'text', 'int8'])} AS t(d, e, c, n, b, o)
    ON CONFLICT (event_id, instance_id) DO NOTHING`);
  // Rows inserted just now are pending, so they never match here.
  const requeued = await db.query(sql.typeAlias('void')`
    UPDATE webhook_deliveries
       SET state = 'pending', next_attempt_at = now(), round_attempts = 0, lease_until = NULL, updated_at = now()
     WHERE instance_id = ${instanceId} AND event_id = ANY(${sql.array(events.map((e) => e.event_id), 'text')}) AND state = 'failed'`);
  return { queued: inserted.rowCount, requeued: requeued.rowCount };
}
