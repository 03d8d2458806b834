import type { PoolClient } from '@gw/db';
import type { PolicyEvent } from '@gw/policy';

/** Keeps the queryable suppression and quota tables in step with the events the engine folded. */
export async function project(client: PoolClient, event: PolicyEvent): Promise<void> {
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
    case 'SendDecided':
      if (event.decision !== 'accepted') return;
      await client.query(
        `INSERT INTO quota_usage (customer_id, window_key, used) VALUES ($1, $2, 1), ($1, $3, 1)
         ON CONFLICT (customer_id, window_key) DO UPDATE SET used = quota_usage.used + 1`,
        [event.customerId, event.quotaWindows.day, event.quotaWindows.month],
      );
      return;
    default:
      return;
  }
}
