import { sql, type Pool } from '@gw/db';
import type { RetryPolicy } from '@gw/webhooks';
import type { AttemptRecord } from './attempt.ts';
import { EndpointHealthRow, foldHealth } from './endpoint-health.ts';

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
/** A time in ms (or none) as timestamptz text. */
const at = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

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
    const byEndpoint = new Map<string, AttemptRecord[]>();
    for (const a of batch) {
      const attempts = byEndpoint.get(a.claim.instanceId);
      if (attempts) attempts.push(a);
      else byEndpoint.set(a.claim.instanceId, [a]);
    }
    const outcomes = batch.map(outcomeOf);
    const nextAt = (i: number) => outcomes[i]!.nextAttemptAt?.toISOString() ?? null;
    await this.pool.transaction(async (tx) => {
      await tx.query(sql.typeAlias('void')`
        INSERT INTO webhook_attempts (delivery_id, attempt, attempted_at, destination_url, status_code, latency_ms, response_snippet, error, outcome, next_attempt_at)
        SELECT * FROM ${sql.unnest(
          batch.map((a, i) => [
            a.claim.deliveryId,
            a.claim.attempt,
            at(a.attemptedAt),
            a.claim.destinationUrl,
            a.result.status,
            a.result.latencyMs,
            storable(a.result.responseSnippet),
            errorOf(a),
            outcomes[i]!.outcome,
            nextAt(i),
          ]),
          ['text', 'int4', 'timestamptz', 'text', 'int4', 'int4', 'text', 'text', 'text', 'timestamptz'],
        )}`);
      // Only a delivery still in flight moves on: one taken back by resend or recover keeps its new state.
      await tx.query(sql.typeAlias('void')`
        UPDATE webhook_deliveries d
           SET state = u.state, next_attempt_at = COALESCE(u.next_at, d.next_attempt_at), lease_until = NULL,
               last_status = u.status, last_error = u.error, updated_at = now()
          FROM ${sql.unnest(
            batch.map((a, i) => [a.claim.deliveryId, outcomes[i]!.state, nextAt(i), a.result.status, errorOf(a)]),
            ['text', 'text', 'timestamptz', 'int4', 'text'],
          )} AS u(id, state, next_at, status, error)
         WHERE d.delivery_id = u.id AND d.state = 'in_flight'`);
      // Endpoints last and in a fixed order: the lock is short, and concurrent writers never deadlock.
      // NO KEY UPDATE (the key is not changed): the enqueue stage's inserts check their foreign key
      // to the endpoint row with KEY SHARE, which FOR UPDATE would make wait for this commit.
      const locked = await tx.any(sql.type(EndpointHealthRow)`
        SELECT instance_id, status, failing_since, last_success_at, consecutive_failures, disabled_at, disabled_reason
          FROM webhook_endpoints WHERE instance_id = ANY(${sql.array([...byEndpoint.keys()], 'text')}) ORDER BY instance_id FOR NO KEY UPDATE`);
      // Every endpoint's new health in one statement: the rows stay locked for one round trip, not one per endpoint.
      const folded = locked.map((row) => ({ id: row.instance_id, ...foldHealth(row, byEndpoint.get(row.instance_id) ?? [], this.policy) }));
      await tx.query(sql.typeAlias('void')`
        UPDATE webhook_endpoints e
           SET status = u.status, failing_since = u.failing_since, last_success_at = u.last_success_at,
               consecutive_failures = u.consecutive_failures, disabled_at = u.disabled_at, disabled_reason = u.disabled_reason, updated_at = now()
          FROM ${sql.unnest(
            folded.map((f) => [
              f.id,
              f.status,
              at(f.health.failingSince),
              at(f.health.lastSuccessAt),
              f.health.consecutiveFailures,
              at(f.health.disabledAt),
              f.health.disabledReason,
            ]),
            ['text', 'text', 'timestamptz', 'timestamptz', 'int4', 'timestamptz', 'text'],
          )} AS u(instance_id, status, failing_since, last_success_at, consecutive_failures, disabled_at, disabled_reason)
         WHERE e.instance_id = u.instance_id`);
    });
  }
}
