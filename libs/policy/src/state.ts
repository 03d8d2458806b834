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
  /**
   * Recipient (E.164, or a canonical linked id `<digits>@lid` when the chat network hid the number)
   * → the sources that suppress it. `via: 'linked_id'`: carried over to this number from a linked
   * id it is known to be (the engine's own RecipientSuppressed with `linkedFrom`).
   */
  suppressed: Record<string, Partial<Record<SuppressionSource, SuppressionEntry>>>;
  /**
   * Instance → the linked ids it learned (RecipientIdentityLinked): `phones` lid → E.164 and its
   * reverse `lids` E.164 → lids. One entry per linked sender per instance (a re-link replaces it),
   * never pruned, like `suppressed`: it grows with the people who wrote in, not with traffic.
   */
  identities: Record<string, IdentityLinks>;
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

export interface SuppressionEntry {
  reason: string;
  by: string;
  at: number;
  via?: 'linked_id';
}

export interface IdentityLinks {
  phones: Record<string, string>;
  lids: Record<string, string[]>;
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
 * so it must refuse these snapshots (and rebuild from the log) rather than read them. Version 4
 * adds `identities` (linked ids); a version-3 snapshot has none, as no link was recorded before.
 */
export const STATE_VERSION = 4;

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
    identities: {},
    paused: {},
    quota: { day: { window: '', used: 0 }, month: { window: '', used: 0 } },
    buckets: {},
    recent: [],
    quality: {},
  };
}


/**
 * Brings a stored snapshot to the current shape. Version 2 kept one run per hour, which is a valid
 * version-3 `recent` as it is; versions 2 and 3 had no linked ids (empty `identities`). Version 1
 * (no stateVersion) kept `lastSend` and `bulk` maps; they are dropped and the send memory starts empty, which forgets at most a day of bulk and interval
 * history. Anything unrecognisable returns null: rebuild it with replay(log).
 */
export function upgradeState(snapshot: unknown): CustomerPolicyState | null {
  if (typeof snapshot !== 'object' || snapshot === null || typeof (snapshot as { customerId?: unknown }).customerId !== 'string') return null;
  const raw = snapshot as Partial<CustomerPolicyState> & { lastSend?: unknown; bulk?: unknown; customerId: string };
  if (raw.stateVersion === STATE_VERSION) return raw as CustomerPolicyState;
  if (raw.stateVersion === 2 || raw.stateVersion === 3) return { ...(raw as CustomerPolicyState), identities: {}, stateVersion: STATE_VERSION };
  if (raw.stateVersion !== undefined) return null;
  const { lastSend: _lastSend, bulk: _bulk, ...rest } = raw;
  return { ...initialPolicyState(raw.customerId), ...rest, stateVersion: STATE_VERSION, recent: [] };
}
