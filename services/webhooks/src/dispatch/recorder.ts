import type { Pool } from '@gw/db';
import type { RetryPolicy } from '@gw/webhooks';
import type { AttemptRecord } from './attempt.ts';
import { foldHealth, type EndpointHealthRow } from './endpoint-health.ts';

type DeliveryState = 'pending' | 'delivered' | 'failed';
type Pending = { attempt: AttemptRecord; resolve: () => void; reject: (error: unknown) => void };
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
 * last, in a fixed order, so concurrent writers never deadlock).
 */
export class AttemptRecorder {
  private buffer: Pending[] = [];
  private writing = 0;
  private timer: NodeJS.Timeout | null = null;
  private readonly drained: Array<() => void> = [];

  constructor(
    private readonly pool: Pool,
    private readonly policy: RetryPolicy,
    private readonly onError: (error: unknown) => void,
    private readonly lingerMs = 10,
    private readonly maxBatch = 500,
    /** Batches written at once: a commit's wait need not hold up the next batch. */
    private readonly maxWriters = 3,
  ) {}

  /** Resolves once the attempt is stored (its delivery is no longer in flight). */
  record(attempt: AttemptRecord): Promise<void> {
    return new Promise((resolve, reject) => {
      this.buffer.push({ attempt, resolve, reject });
      if (this.buffer.length >= this.maxBatch) this.pump();
      else this.timer ??= setTimeout(() => this.pump(), this.lingerMs);
    });
  }

  /** Writes everything buffered and resolves when nothing is being written. */
  async flush(): Promise<void> {
    this.pump();
    if (this.writing === 0 && this.buffer.length === 0) return;
    await new Promise<void>((resolve) => this.drained.push(resolve));
  }

  private pump(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    while (this.buffer.length > 0 && this.writing < this.maxWriters) {
      const batch = this.buffer.splice(0, this.maxBatch);
      this.writing++;
      this.write(batch.map((p) => p.attempt))
        .then(() => batch.forEach((p) => p.resolve()))
        .catch((error) => {
          this.onError(error);
          batch.forEach((p) => p.reject(error));
        })
        .finally(() => {
          this.writing--;
          if (this.buffer.length > 0) this.pump();
          else if (this.writing === 0) this.drained.splice(0).forEach((resolve) => resolve());
        });
    }
  }

  private async write(batch: AttemptRecord[]): Promise<void> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      const byEndpoint = new Map<string, AttemptRecord[]>();
      for (const a of batch) {
        const attempts = byEndpoint.get(a.claim.instanceId);
        if (attempts) attempts.push(a);
        else byEndpoint.set(a.claim.instanceId, [a]);
      }
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
      // Endpoints last and in a fixed order: the lock is short, and concurrent writers never deadlock.
      const locked = await client.query<EndpointHealthRow>(
        `SELECT instance_id, status, failing_since, last_success_at, consecutive_failures, disabled_at, disabled_reason
           FROM webhook_endpoints WHERE instance_id = ANY($1::text[]) ORDER BY instance_id FOR UPDATE`,
        [[...byEndpoint.keys()]],
      );
      // Every endpoint's new health in one statement: the rows stay locked for one round trip, not one per endpoint.
      const folded = locked.rows.map((row) => ({ id: row.instance_id, ...foldHealth(row, byEndpoint.get(row.instance_id) ?? [], this.policy) }));
      const at = (ms: number | null) => (ms === null ? null : new Date(ms));
      await client.query(
        `UPDATE webhook_endpoints e
            SET status = u.status, failing_since = u.failing_since, last_success_at = u.last_success_at,
                consecutive_failures = u.consecutive_failures, disabled_at = u.disabled_at, disabled_reason = u.disabled_reason, updated_at = now()
           FROM unnest($1::text[], $2::text[], $3::timestamptz[], $4::timestamptz[], $5::int[], $6::timestamptz[], $7::text[])
                AS u(instance_id, status, failing_since, last_success_at, consecutive_failures, disabled_at, disabled_reason)
          WHERE e.instance_id = u.instance_id`,
        [
          folded.map((f) => f.id),
          folded.map((f) => f.status),
          folded.map((f) => at(f.health.failingSince)),
          folded.map((f) => at(f.health.lastSuccessAt)),
          folded.map((f) => f.health.consecutiveFailures),
          folded.map((f) => at(f.health.disabledAt)),
          folded.map((f) => f.health.disabledReason),
        ],
      );
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  }
}
