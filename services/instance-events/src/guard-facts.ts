import { createHash } from 'node:crypto';
import { derivedEventId, type InstanceEventReceived, type PolicyFactRecord } from '@gw/events';
import type { Queryable } from '@gw/db';
import type { PolicyEvent } from '@gw/policy';
import { toFactRecord } from '@gw/policy-log';
import { claimContacts, claimFirstConnection, claimSignals } from './guard-store.ts';
import type { Mapped } from './map-event.ts';
import type { RestrictionReport } from './restriction-signals.ts';
import type { SendFacts } from './store.ts';

/** A restriction report with the send it is about, when it is one of ours. */
export interface ResolvedRestriction {
  report: RestrictionReport;
  send: SendFacts | null;
}

/**
 * When the instance connected, by an open report: the manager's date_time, never later than the
 * report's arrival. (Evolution writes its local wall clock with a "Z", map-event.ts reportedAt: a
 * server east of UTC would otherwise date the connection in the future.)
 */
export function connectedAt(mapped: Mapped, occurredAt: number): number | null {
  if (mapped.connection?.state !== 'open') return null;
  return Math.min(mapped.connection.reportedAt ?? occurredAt, occurredAt);
}

/** The people who wrote in this envelope (direct chats, not ours): phone, or the lid when that is all there is. */
export const writers = (mapped: Mapped): string[] => mapped.inbound.flatMap((m) => (m.chat === 'direct' && m.sender ? [m.sender] : []));

/** Longer refs (a manager's message id or date_time is any string) go into the key as their digest. */
const SIGNAL_REF_MAX = 200;

/**
 * A restriction is counted once per instance by this key. It is a primary key column: a btree
 * refuses a value past about 2.7 kB, Postgres text refuses a NUL, and a lone surrogate would be
 * stored as U+FFFD (two refs, one key). Such a ref is keyed by its SHA-256 instead (of its UTF-16
 * units, so distinct refs keep distinct keys).
 */
export function signalKey(report: RestrictionReport, sourceEventId: string): string {
  const ref = report.ref ?? sourceEventId;
  const storable = ref.length <= SIGNAL_REF_MAX && !ref.includes('\u0000') && ref.isWellFormed();
  return `${report.signal}:${storable ? ref : `sha256:${createHash('sha256').update(ref, 'utf16le').digest('hex')}`}`;
}

/**
 * The number guard's facts of one instance event (issue 27): InstanceConnected the first time
 * the instance is seen open, ContactLearned the first time a person writes to it,
 * RestrictionSignalled for each restriction signal (an ERROR with no code only on one of our
 * sends). Each goes once per instance (guard-store.ts); its id derives from the source event and
 * what it says, so a redelivered event yields the same records.
 */
export async function guardFacts(db: Queryable, received: InstanceEventReceived, mapped: Mapped, restrictions: ResolvedRestriction[]): Promise<PolicyFactRecord[]> {
  const base = { customerId: received.customer_id, at: received.occurred_at, instanceId: received.instance_id };
  const records: PolicyFactRecord[] = [];
  const add = (fact: PolicyEvent, what: string) => records.push({ ...toFactRecord(fact, received.event_id), event_id: derivedEventId(received.event_id, `guard:${what}`) });
  const firstConnectedAt = await claimFirstConnection(db, received.instance_id, received.event_id, connectedAt(mapped, received.occurred_at));
  if (firstConnectedAt !== null) add({ ...base, type: 'InstanceConnected', firstConnectedAt }, 'connected');
  for (const contact of await claimContacts(db, received.instance_id, received.event_id, writers(mapped), received.occurred_at)) {
    add({ ...base, type: 'ContactLearned', contact }, `contact:${contact}`);
  }
  const counted = restrictions.filter(({ report, send }) => !report.ourSendOnly || send);
  const told = await claimSignals(db, received.instance_id, received.event_id, counted.map(({ report }) => signalKey(report, received.event_id)));
  for (const { report, send } of counted) {
    const key = signalKey(report, received.event_id);
    if (!told.has(key)) continue;
    told.delete(key); // one fact per key, should an envelope repeat one
    add({ ...base, type: 'RestrictionSignalled', signal: report.signal, code: report.code, until: report.until, messageId: send?.messageId ?? null, recipient: send?.recipient ?? null }, `restriction:${key}`);
  }
  return records;
}
