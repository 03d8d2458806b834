import type { LimitsOverridden, PolicyModule, QualitySignal, SuppressionSource } from './events.ts';

/**
 * The fold of one customer's policy events. Plain JSON only (no Map, Set or Date) so the service
 * can snapshot it in Postgres; every time window in it is pruned as event time moves on, so its
 * size is bounded by the customer's configuration and traffic of the last day, never by history.
 */
export interface CustomerPolicyState {
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
  /** Instance → recipient → time of the last accepted send (per-recipient interval). */
  lastSend: Record<string, Record<string, number>>;
  /**
   * Shard (first two hex digits of the digest) → digest → recipient → time of the last accepted
   * send with that body. Sharded so folding one send copies a small object, not a day of digests.
   */
  bulk: Record<string, Record<string, Record<string, number>>>;
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

/** The state of a customer nobody has told the engine anything about. */
export function initialPolicyState(customerId: string): CustomerPolicyState {
  return {
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
    lastSend: {},
    bulk: {},
    quality: {},
  };
}

/** The bulk-memory shard a digest lives in. */
export const bulkShard = (digest: string): string => digest.slice(0, 2);

/** Recipients that got this body, with the time of the last accepted send to each. */
export const recipientsOfDigest = (state: CustomerPolicyState, digest: string): Record<string, number> =>
  state.bulk[bulkShard(digest)]?.[digest] ?? {};
