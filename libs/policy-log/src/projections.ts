import type { PoolClient } from '@gw/db';
import type { PolicyEvent } from '@gw/policy';

/**
 * Keeps the queryable suppression and quota tables in step with the events the engine folded.
 * Quota increments are summed and written once per batch (flush); suppression changes are
 * written in order as they come, since an add and a remove of one recipient must not swap.
 */
export class ProjectionBatch {
  private readonly quota = new Map<string, { customerId: string; windowKey: string; used: number }>();

  constructor(private readonly client: PoolClient) {}

  async add(event: PolicyEvent): Promise<void> {
    if (event.type === 'SendDecided') {
      if (event.decision !== 'accepted') return;
      for (const windowKey of [event.quotaWindows.day, event.quotaWindows.month]) {
        const key = `${event.customerId} ${windowKey}`;
        const entry = this.quota.get(key) ?? { customerId: event.customerId, windowKey, used: 0 };
        entry.used += 1;
        this.quota.set(key, entry);
      }
      return;
    }
    await projectSuppression(this.client, event);
  }

  async flush(): Promise<void> {
    if (this.quota.size === 0) return;
    const rows = [...this.quota.values()];
    this.quota.clear();
    await this.client.query(
      `INSERT INTO quota_usage (customer_id, window_key, used)
       SELECT * FROM unnest($1::text[], $2::text[], $3::int[])
       ON CONFLICT (customer_id, window_key) DO UPDATE SET used = quota_usage.used + EXCLUDED.used`,
      [rows.map((r) => r.customerId), rows.map((r) => r.windowKey), rows.map((r) => r.used)],
    );
  }
}

/** One event at a time (tools and tests); the consumer batches with ProjectionBatch. */
export async function project(client: PoolClient, event: PolicyEvent): Promise<void> {
  const batch = new ProjectionBatch(client);
  await batch.add(event);
  await batch.flush();
}

async function projectSuppression(client: PoolClient, event: PolicyEvent): Promise<void> {
  switch (event.type) {
    case 'RecipientSuppressed':
      await client.query(
        `INSERT INTO suppressions (customer_id, recipient, source, reason, created_by, created_at)
         VALUES ($1, $2, $3, $4, $5, to_timestamp($6 / 1000.0))
         ON CONFLICT (customer_id, recipient, source) DO UPDATE SET reason = EXCLUDED.reason, created_by = EXCLUDED.created_by, created_at = EXCLUDED.created_at`,
        [event.customerId, event.recipient, event.source, event.reason, event.by, event.at],
      );
      return;
    case 'RecipientUnsuppressed':
      await client.query('DELETE FROM suppressions WHERE customer_id = $1 AND recipient = $2 AND source = $3', [event.customerId, event.recipient, event.source]);
      return;
    default:
      return;
  }
}
