import type { LimitsOverridden, PolicyModule, QualitySignal, SuppressionSource } from './events.ts';
import type { RecentSendsHour } from './time/recent-sends.ts';

/**
 * The fold of one customer's policy events. Plain JSON only (no Map, Set or Date) so the service
 * can snapshot it in Postgres; every time window in it is pruned as event time moves on, so its
 * size is bounded by the customer's configuration and traffic of the last day, never by history.
 */
export interface CustomerPolicyState {
  /** Shape version of this JSON (STATE_VERSION); a snapshot of another shape goes through upgradeState. */
  stateVersion: number;
  customerId: string;
  registeredAt: number | null;
  /** Highest event time seen: the watermark windows are pruned against (never moves back). */
  clock: number;
  /** Event time of the last full prune sweep (done at most once per hour of event time). */
  prunedAt: number;
  /** Per module; a missing entry means the config's default. */
  modules: Partial<Record<PolicyModule, boolean>>;
  plan: { planId: string | null; validUntil: number | null };
  override: Omit<LimitsOverridden, 'type' | 'customerId'> | null;
  purposes: { customer: string[] | null; instances: Record<string, string[]> };
  /** E.164 recipient → the sources that suppress it. */
  suppressed: Record<string, Partial<Record<SuppressionSource, { reason: string; by: string; at: number }>>>;
  paused: Record<string, { reason: string; by: string; at: number; signals?: QualitySignal[] }>;
  /** Accepted sends in the current calendar windows. */
  quota: { day: { window: string; used: number }; month: { window: string; used: number } };
  /** Instance → its token bucket level at `at`. */
  buckets: Record<string, { tokens: number; at: number }>;
  /** Accepted sends of the last RETENTION.bulkMs, in runs within each hour: per-recipient interval and bulk detection. */
  recent: RecentSendsHour[];
  /** Instance → hourly quality buckets, oldest first. */
  quality: Record<string, QualityBucket[]>;
}

export interface QualityBucket {
  /** Start of the UTC hour (epoch ms). */
  hour: number;
  /** Sends whose content was judged: accepted + refused with policy_violation. */
  judged: number;
  violations: number;
  accepted: number;
  optOuts: number;
  delivered: number;
  failed: number;
}

/**
 * Bumped whenever the shape of CustomerPolicyState changes (stored snapshots carry it). Version 3
 * lets an hour of `recent` hold several runs; code of version 2 would insert into the wrong run,
 * so it must refuse these snapshots (and rebuild from the log) rather than read them.
 */
export const STATE_VERSION = 3;

/** The state of a customer nobody has told the engine anything about. */
export function initialPolicyState(customerId: string): CustomerPolicyState {
  return {
    stateVersion: STATE_VERSION,
    customerId,
    registeredAt: null,
    clock: 0,
    prunedAt: 0,
    modules: {},
    plan: { planId: null, validUntil: null },
    override: null,
    purposes: { customer: null, instances: {} },
    suppressed: {},
    paused: {},
    quota: { day: { window: '', used: 0 }, month: { window: '', used: 0 } },
    buckets: {},
    recent: [],
    quality: {},
  };
}


/**
 * Brings a stored snapshot to the current shape. Version 2 kept one run per hour, which is a valid
 * version-3 `recent` as it is. Version 1 (no stateVersion) kept `lastSend` and `bulk` maps; they
 * are dropped and the send memory starts empty, which forgets at most a day of bulk and interval
 * history. Anything unrecognisable returns null: rebuild it with replay(log).
 */
export function upgradeState(snapshot: unknown): CustomerPolicyState | null {
  if (typeof snapshot !== 'object' || snapshot === null || typeof (snapshot as { customerId?: unknown }).customerId !== 'string') return null;
  const raw = snapshot as Partial<CustomerPolicyState> & { lastSend?: unknown; bulk?: unknown; customerId: string };
  if (raw.stateVersion === STATE_VERSION) return raw as CustomerPolicyState;
  if (raw.stateVersion === 2) return { ...(raw as CustomerPolicyState), stateVersion: STATE_VERSION };
  if (raw.stateVersion !== undefined) return null;
  const { lastSend: _lastSend, bulk: _bulk, ...rest } = raw;
  return { ...initialPolicyState(raw.customerId), ...rest, stateVersion: STATE_VERSION, recent: [] };
}
