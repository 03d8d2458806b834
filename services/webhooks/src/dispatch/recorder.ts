import type { Pool } from '@gw/db';
import type { RetryPolicy } from '@gw/webhooks';
import type { AttemptRecord } from './attempt.ts';
import { foldHealth, type EndpointHealthRow } from './endpoint-health.ts';

type DeliveryState = 'pending' | 'delivered' | 'failed';
type AttemptOutcome = 'delivered' | 'retry' | 'failed' | 'endpoint_disabled';

/** The delivery's next state and the attempt log's outcome word for one attempt. */
export function outcomeOf(record: AttemptRecord): { state: DeliveryState; outcome: AttemptOutcome; nextAttemptAt: Date | null } {
  const plan = record.plan;
  switch (plan.action) {
    case 'delivered':
      return { state: 'delivered', outcome: 'delivered', nextAttemptAt: null };
    case 'retry':
      return { state: 'pending', outcome: 'retry', nextAttemptAt: plan.at };
    case 'give_up':
      return { state: 'failed', outcome: 'failed', nextAttemptAt: null };
    case 'disable_endpoint':
      return { state: 'failed', outcome: 'endpoint_disabled', nextAttemptAt: null };
  }
}

export function errorOf(record: AttemptRecord): string | null {
  const c = record.classification;
  return c.outcome === 'success' ? null : `${c.reason}: ${c.detail}`;
}

// Postgres text cannot hold NUL; a receiver's response bytes can.
const storable = (text: string) => text.replaceAll('\u0000', '\uFFFD');

/**
 * Writes attempts in batches: one transaction records every attempt of the batch, moves each
 * delivery to its next state, and folds the attempts into their endpoints' health (rows locked
 * in a fixed order, so concurrent recorders never deadlock).
 */
export class AttemptRecorder {
  private buffer: AttemptRecord[] = [];
  private flushing: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly pool: Pool,
    private readonly policy: RetryPolicy,
    private readonly onError: (error: unknown) => void,
    private readonly lingerMs = 10,
    private readonly maxBatch = 500,
  ) {}

  /** Resolves once the attempt is stored (its delivery is no longer in flight). */
  record(attempt: AttemptRecord): Promise<void> {
    return new Promise((resolve, reject) => {
      this.buffer.push(Object.assign(attempt, { done: { resolve, reject } }));
      if (this.buffer.length >= this.maxBatch) void this.flush();
      else this.timer ??= setTimeout(() => void this.flush(), this.lingerMs);
    });
  }

  async flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    while (this.flushing) await this.flushing;
    const batch = this.buffer as Array<AttemptRecord & { done: { resolve: () => void; reject: (e: unknown) => void } }>;
    if (batch.length === 0) return;
    this.buffer = [];
    this.flushing = this.write(batch)
      .then(() => batch.forEach((a) => a.done.resolve()))
      .catch((error) => {
        this.onError(error);
        batch.forEach((a) => a.done.reject(error));
      })
      .finally(() => (this.flushing = null));
    await this.flushing;
  }

  private async write(batch: AttemptRecord[]): Promise<void> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      const byEndpoint = new Map<string, AttemptRecord[]>();
      for (const a of batch) byEndpoint.set(a.claim.instanceId, [...(byEndpoint.get(a.claim.instanceId) ?? []), a]);
      const locked = await client.query<EndpointHealthRow>(
        `SELECT instance_id, status, failing_since, last_success_at, consecutive_failures, disabled_at, disabled_reason
           FROM webhook_endpoints WHERE instance_id = ANY($1::text[]) ORDER BY instance_id FOR UPDATE`,
        [[...byEndpoint.keys()]],
      );
      const outcomes = batch.map(outcomeOf);
      await client.query(
        `INSERT INTO webhook_attempts (delivery_id, attempt, attempted_at, destination_url, status_code, latency_ms, response_snippet, error, outcome, next_attempt_at)
         SELECT * FROM unnest($1::text[], $2::int[], $3::timestamptz[], $4::text[], $5::int[], $6::int[], $7::text[], $8::text[], $9::text[], $10::timestamptz[])`,
        [
          batch.map((a) => a.claim.deliveryId),
          batch.map((a) => a.claim.attempt),
          batch.map((a) => new Date(a.attemptedAt)),
          batch.map((a) => a.claim.destinationUrl),
          batch.map((a) => a.result.status),
          batch.map((a) => a.result.latencyMs),
          batch.map((a) => storable(a.result.responseSnippet)),
          batch.map(errorOf),
          outcomes.map((o) => o.outcome),
          outcomes.map((o) => o.nextAttemptAt),
        ],
      );
      // Only a delivery still in flight moves on: one taken back by resend or recover keeps its new state.
      await client.query(
        `UPDATE webhook_deliveries d
            SET state = u.state, next_attempt_at = COALESCE(u.next_at, d.next_attempt_at), lease_until = NULL,
                last_status = u.status, last_error = u.error, updated_at = now()
           FROM unnest($1::text[], $2::text[], $3::timestamptz[], $4::int[], $5::text[]) AS u(id, state, next_at, status, error)
          WHERE d.delivery_id = u.id AND d.state = 'in_flight'`,
        [batch.map((a) => a.claim.deliveryId), outcomes.map((o) => o.state), outcomes.map((o) => o.nextAttemptAt), batch.map((a) => a.result.status), batch.map(errorOf)],
      );
      for (const row of locked.rows) {
        const { health, status } = foldHealth(row, byEndpoint.get(row.instance_id) ?? [], this.policy);
        await client.query(
          `UPDATE webhook_endpoints
              SET status = $2, failing_since = $3, last_success_at = $4, consecutive_failures = $5,
                  disabled_at = $6, disabled_reason = $7, updated_at = now()
            WHERE instance_id = $1`,
          [
            row.instance_id,
            status,
            health.failingSince === null ? null : new Date(health.failingSince),
            health.lastSuccessAt === null ? null : new Date(health.lastSuccessAt),
            health.consecutiveFailures,
            health.disabledAt === null ? null : new Date(health.disabledAt),
            health.disabledReason,
          ],
        );
      }
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  }
}
