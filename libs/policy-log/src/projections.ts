import { sql, type Queryable } from '@gw/db';
import { recipientKey, type PolicyEvent } from '@gw/policy';

/** A change of the suppressions table; each is also a suppression_history row (with its cause). */
export interface SuppressionOp {
  op: 'add' | 'remove';
  customer_id: string;
  recipient: string;
  source: string;
  reason: string;
  created_by: string;
  at: number;
  instance_id: string | null;
  inbound_message_id: string | null;
  /** The linked id (or number) this change was carried over from by the engine; null for a fact's own change. */
  linked_from: string | null;
}

/**
 * What the folded events change in the queryable suppression and quota tables: quota increments
 * summed per customer and window, suppression changes kept in order (an add and a remove of one
 * recipient must not swap). Pure: the policy consumer writes it with its batch statement, the
 * projection rebuild with ProjectionBatch.
 */
export class ProjectionChanges {
  readonly quota = new Map<string, { customerId: string; windowKey: string; used: number }>();
  readonly suppressions: SuppressionOp[] = [];

  add(event: PolicyEvent): void {
    switch (event.type) {
      case 'SendDecided':
        if (event.decision !== 'accepted') return;
        for (const windowKey of [event.quotaWindows.day, event.quotaWindows.month]) {
          const key = `${event.customerId} ${windowKey}`;
          const entry = this.quota.get(key) ?? { customerId: event.customerId, windowKey, used: 0 };
          entry.used += 1;
          this.quota.set(key, entry);
        }
        return;
      case 'RecipientSuppressed':
      case 'RecipientUnsuppressed':
        this.suppressions.push({
          op: event.type === 'RecipientSuppressed' ? 'add' : 'remove',
          customer_id: event.customerId,
          // The key the engine keeps it under (E.164, or a canonical linked id), so both agree.
          recipient: recipientKey(event.recipient),
          source: event.source,
          reason: event.reason ?? '',
          created_by: event.by,
          at: event.at,
          instance_id: event.instanceId ?? null,
          inbound_message_id: event.inboundMessageId ?? null,
          linked_from: event.linkedFrom ?? null,
        });
        return;
      default:
        return;
    }
  }
}

/** Collects projection changes and writes them on flush (tools and the projection rebuild). */
export class ProjectionBatch {
  private changes = new ProjectionChanges();

  constructor(private readonly db: Queryable) {}

  async add(event: PolicyEvent): Promise<void> {
    this.changes.add(event);
  }

  async flush(): Promise<void> {
    const { quota, suppressions } = this.changes;
    this.changes = new ProjectionChanges();
    for (const change of suppressions) await writeSuppression(this.db, change);
    if (quota.size === 0) return;
    const rows = [...quota.values()];
    await this.db.query(sql.typeAlias('void')`
      INSERT INTO quota_usage (customer_id, window_key, used)
      SELECT * FROM ${sql.unnest(rows.map((r) => [r.customerId, r.windowKey, r.used]), ['text', 'text', 'int4'])}
      ON CONFLICT (customer_id, window_key) DO UPDATE SET used = quota_usage.used + EXCLUDED.used`);
  }
}

/** One event at a time (tools and tests); the consumer batches with ProjectionBatch. */
export async function project(db: Queryable, event: PolicyEvent): Promise<void> {
  const batch = new ProjectionBatch(db);
  await batch.add(event);
  await batch.flush();
}

async function writeSuppression(db: Queryable, change: SuppressionOp): Promise<void> {
  await db.query(sql.typeAlias('void')`
    INSERT INTO suppression_history (customer_id, recipient, action, source, reason, created_by, at, instance_id, inbound_message_id, linked_from)
    VALUES (${change.customer_id}, ${change.recipient}, ${change.op === 'add' ? 'suppressed' : 'unsuppressed'}, ${change.source}, ${change.reason},
            ${change.created_by}, to_timestamp(${change.at} / 1000.0), ${change.instance_id}, ${change.inbound_message_id}, ${change.linked_from})`);
  if (change.op === 'add') {
    await db.query(sql.typeAlias('void')`
      INSERT INTO suppressions (customer_id, recipient, source, reason, created_by, created_at)
      VALUES (${change.customer_id}, ${change.recipient}, ${change.source}, ${change.reason}, ${change.created_by}, to_timestamp(${change.at} / 1000.0))
      ON CONFLICT (customer_id, recipient, source) DO UPDATE SET reason = EXCLUDED.reason, created_by = EXCLUDED.created_by, created_at = EXCLUDED.created_at`);
    return;
  }
  await db.query(sql.typeAlias('void')`
    DELETE FROM suppressions WHERE customer_id = ${change.customer_id} AND recipient = ${change.recipient} AND source = ${change.source}`);
}
