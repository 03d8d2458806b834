import { jsonOf, sql, type Queryable } from '@gw/db';
import type { SendDecided } from '@gw/events';
import { recipientKey, type CustomerPolicyState, type PolicyEvent } from '@gw/policy';
import { toLogRow } from './entry.ts';
import { instanceGuardUpsert, TouchedInstances, type InstanceGuardRow } from './instance-guard.ts';
import { tailWrites, type StateWrites } from './state-store.ts';

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
 * recipient must not swap). Pure: the policy consumer and the projection rebuild both write it
 * with applyPolicyBatch.
 */
export class ProjectionChanges {
  readonly quota = new Map<string, { customerId: string; windowKey: string; used: number }>();
  readonly suppressions: SuppressionOp[] = [];
  /** The instances the events name: their instance_guard rows are written from the states after the batch. */
  readonly touched = new TouchedInstances();

  add(event: PolicyEvent): void {
    this.touched.add(event);
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

/**
 * Everything one batch of customer-events changes in the policy projections: the partition's
 * offset (fenced on the one expected), its chain (moved only when lastLogId is not null, fenced on
 * expectedHead), the new policy-log entries, the folded fact ids, the customers' new states and
 * the projection changes.
 */
export interface PolicyBatchWrite {
  topic: string;
  partition: number;
  expectedOffset: bigint;
  nextOffset: bigint;
  expectedHead: string;
  head: string;
  lastLogId: number | null;
  entries: SendDecided[];
  /** Snapshots written whole (policy_state); their tails are deleted. */
  states: Map<string, CustomerPolicyState>;
  /** Events appended to customers' tails instead of a snapshot (state-store.ts planStateWrites). */
  tails?: StateWrites['tails'];
  quota: ProjectionChanges['quota'];
  suppressions: SuppressionOp[];
  factIds: string[];
  /** instance_guard rows of the instances the batch touched (instanceGuardRows), written in the same statement. */
  instanceGuard?: InstanceGuardRow[];
}

/**
 * Writes a batch in one statement, policy_apply_batch (libs/db/functions/policy_apply_batch.sql),
 * or nothing if its fence fails. The one writer of these tables: the policy consumer and the
 * projection rebuild both come here, so a rebuilt projection is the consumer's by construction.
 * The batches travel as JSON made by JSON.stringify (jsonOf): the send path's hot statement.
 */
export async function applyPolicyBatch(db: Queryable, write: PolicyBatchWrite): Promise<void> {
  const stateIds = [...write.states.keys()];
  const quota = [...write.quota.values()];
  // instance_guard and the state tails ride in the same statement (WITHs that always run to
  // completion): written with the batch, or not at all when the fence fails.
  const ctes = [
    ...(write.instanceGuard?.length ? [sql.fragment`instance_guard_rows AS (${instanceGuardUpsert(write.instanceGuard)})`] : []),
    ...tailWrites(write.tails ?? [], stateIds),
  ];
  const guard = ctes.length > 0 ? sql.fragment`WITH ${sql.join(ctes, sql.fragment`, `)} ` : sql.fragment``;
  // In FROM, so the function's void result is a row without columns (the void type alias expects none).
  await db.query(sql.typeAlias('void')`
    ${guard}SELECT FROM policy_apply_batch(
      ${write.topic},
      ${write.partition},
      ${write.expectedOffset.toString()},
      ${write.nextOffset.toString()},
      ${write.expectedHead},
      ${write.head},
      ${write.lastLogId},
      ${jsonOf(write.entries.map(toLogRow))},
      ${sql.array(stateIds, 'text')},
      ${jsonOf(stateIds.map((id) => write.states.get(id)))},
      ${sql.array(quota.map((q) => q.customerId), 'text')},
      ${sql.array(quota.map((q) => q.windowKey), 'text')},
      ${sql.array(quota.map((q) => q.used), 'int4')},
      ${jsonOf(write.suppressions)},
      ${sql.array(write.factIds, 'text')})`);
}
