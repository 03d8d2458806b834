import type { Pool } from '@gw/db';
import type { EventCodec, GatewayEventEmitted } from '@gw/events';
import type { ConsumedRecord, KafkaInspector } from '@gw/kafka';
import { deliveryIdFor } from '@gw/webhooks';
import { CliError } from '../accounts/customers.ts';
import { refuseDisabled, requireEndpoint } from './endpoint-store.ts';

/**
 * How far before --since the topic is read. A record is appended after its event occurred, so its
 * Kafka timestamp is normally later than occurred_at; the margin covers clocks that disagree.
 */
export const CLOCK_SKEW_MARGIN_MS = 5 * 60_000;
const FLUSH_EVERY = 500;

export interface RecoverDeps {
  pool: Pool;
  kafka: KafkaInspector;
  codec: EventCodec;
  /** The full gateway-events topic name (with the deployment's prefix). */
  topic: string;
}

export interface RecoverReport {
  instance_id: string;
  since: string;
  /** Records read from the topic (all instances), from the start position found for --since. */
  records_read: number;
  /** This instance's events, of a subscribed kind, that occurred at or after --since (each event once). */
  scanned: number;
  /** New pending deliveries. */
  queued: number;
  /** Failed deliveries put back to pending for a new retry round. */
  requeued: number;
  /** Deliveries that exist already and are delivered, pending or being delivered: left alone. */
  skipped: number;
}

/**
 * `webhook recover`: re-queues what the endpoint missed since a time, from the gateway-events
 * topic (the system of record). Idempotent: delivery ids derive from (event id, instance id), so
 * a second run finds the rows of the first and queues nothing new.
 */
export async function recoverDeliveries(deps: RecoverDeps, input: { instanceId: string; since: Date }): Promise<RecoverReport> {
  const endpoint = await requireEndpoint(deps.pool, input.instanceId);
  refuseDisabled(endpoint, 'a recover');
  if (!(await deps.kafka.hasTopic(deps.topic))) throw new CliError(`Topic ${deps.topic} does not exist: no gateway events were ever emitted here.`);

  const subscribed = new Set(endpoint.events);
  const sinceMs = input.since.getTime();
  const report: RecoverReport = { instance_id: input.instanceId, since: input.since.toISOString(), records_read: 0, scanned: 0, queued: 0, requeued: 0, skipped: 0 };
  // The topic may hold one event more than once (a replayed emit keeps its event id): count it once.
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

  const ends = await deps.kafka.endOffsets(deps.topic);
  const from = await deps.kafka.offsetsAtTime(deps.topic, sinceMs - CLOCK_SKEW_MARGIN_MS);
  await deps.kafka.readToEnd(deps.topic, {
    ends,
    from,
    onBatch: async (records) => {
      report.records_read += records.length;
      for (const record of records) {
        const event = await gatewayEvent(deps.codec, record);
        if (!event || event.instance_id !== input.instanceId || event.occurred_at < sinceMs || !subscribed.has(event.event)) continue;
        if (seen.has(event.event_id)) continue;
        seen.add(event.event_id);
        report.scanned += 1;
        batch.push(event);
      }
      if (batch.length >= FLUSH_EVERY) await flush();
    },
  });
  if (batch.length > 0) await flush();
  return report;
}

async function gatewayEvent(codec: EventCodec, record: ConsumedRecord): Promise<GatewayEventEmitted | null> {
  // An undecodable record cannot be delivered anyway; the service skips it the same way.
  const decoded = await codec.decode(record).catch(() => null);
  return decoded?.type === 'GatewayEventEmitted' ? decoded.payload : null;
}

/**
 * Inserts pending deliveries for events that have none, and puts failed ones back to pending,
 * due now, in a new round. Rows in any other state are not touched: delivered ones were
 * received, pending and in-flight ones are on their way.
 */
async function queueEvents(pool: Pool, instanceId: string, events: GatewayEventEmitted[]): Promise<{ queued: number; requeued: number }> {
  if (events.length === 0) return { queued: 0, requeued: 0 };
  const inserted = await pool.query(
    `INSERT INTO webhook_deliveries (delivery_id, event_id, instance_id, customer_id, event, body, occurred_at, state, next_attempt_at)
     SELECT d, e, $1, c, n, b, to_timestamp(o / 1000.0), 'pending', now()
       FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::bigint[]) AS t(d, e, c, n, b, o)
     ON CONFLICT (event_id, instance_id) DO NOTHING`,
    [
      instanceId,
      events.map((e) => deliveryIdFor(e.event_id, instanceId)),
      events.map((e) => e.event_id),
      events.map((e) => e.customer_id),
      events.map((e) => e.event),
      events.map((e) => e.payload),
      events.map((e) => e.occurred_at),
    ],
  );
  // Rows inserted just now are pending, so they never match here.
  const requeued = await pool.query(
    `UPDATE webhook_deliveries
        SET state = 'pending', next_attempt_at = now(), round_attempts = 0, lease_until = NULL, updated_at = now()
      WHERE instance_id = $1 AND event_id = ANY($2::text[]) AND state = 'failed'`,
    [instanceId, events.map((e) => e.event_id)],
  );
  return { queued: inserted.rowCount ?? 0, requeued: requeued.rowCount ?? 0 };
}
