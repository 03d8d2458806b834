import type { LimitsOverridden, PolicyModule, QualitySignal, SuppressionSource } from './events.ts';
import { emptySendMemory, fromVersion6, insert, type SendMemory, type SendMemoryV6 } from './time/send-memory.ts';
import { emptyGuard, type GuardState } from './guard/state.ts';
import { emptyInstances, instancesFrom, type Instances } from './instances.ts';

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
  /**
   * Accepted sends of the last RETENTION.bulkMs, shaped for the velocity and bulk rules (per
   * instance and recipient the last send; per body its distinct recipients): time/send-memory.ts.
   */
  sends: SendMemory;
  /**
   * Instance → what the engine keeps of it (instances.ts): its token bucket level, hourly quality
   * buckets and number guard (first-connected time, contacts, first contacts, restriction), in one
   * record per instance. Read it with bucketOf, qualityOf, guardOf.
   */
  instances: Instances;
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
 * Version 5 adds `guard` (the number guard); older snapshots get an empty one (see upgradeState).
 * Version 6 replaces the list of recent sends (`recent`) by `sends`, shaped for the rules; the
 * upgrade folds the list into it, forgetting nothing. Version 7 keeps each body's recipients in the
 * body's own entry of `sends.bodies` (version 6 had a second trie, `bodyRecipients`, written and
 * swept beside it); the upgrade moves them there, forgetting nothing. Version 8 keeps each
 * instance's bucket, quality buckets and guard in one record (`instances`, instances.ts) where
 * version 7 had three maps (`buckets`, `quality`, `guard.instances`); the upgrade moves every entry.
 */
export const STATE_VERSION = 8;

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
    sends: emptySendMemory(),
    instances: emptyInstances(),
  };
}


/**
 * A shallow copy of the state, for evolve to change a few fields of. Written out field by field:
 * an object spread of the state's 15 fields (17 before version 8) cost about a microsecond where this literal costs well
 * under a tenth of one, and evolve copies the state twice per decision (issue 29). Every field is
 * required, so a field added to CustomerPolicyState and not here does not compile.
 */
export function copyState(state: CustomerPolicyState): CustomerPolicyState {
  return {
    stateVersion: state.stateVersion,
    customerId: state.customerId,
    registeredAt: state.registeredAt,
    clock: state.clock,
    prunedAt: state.prunedAt,
    modules: state.modules,
    plan: state.plan,
    override: state.override,
    purposes: state.purposes,
    suppressed: state.suppressed,
    identities: state.identities,
    paused: state.paused,
    quota: state.quota,
    sends: state.sends,
    instances: state.instances,
  };
}

/** Version 5's memory of accepted sends: runs of sends within each UTC hour, sorted by time across runs. */
interface RecentSendsHourV5 {
  hour: number;
  sends: Array<{ at: number; instanceId: string; recipient: string; digest: string }>;
}

/** Version 7's shape: the per-instance data in three maps keyed by instance (versions 2 to 6 kept them the same way). */
type StateV7 = Omit<CustomerPolicyState, 'instances' | 'stateVersion'> & {
  stateVersion: 7;
  buckets: Record<string, { tokens: number; at: number }>;
  quality: Record<string, QualityBucket[]>;
  guard: GuardState;
};

type StateV5 = Omit<StateV7, 'sends' | 'stateVersion'> & { stateVersion: 5; recent: RecentSendsHourV5[] };

type StateV6 = Omit<StateV7, 'sends' | 'stateVersion'> & { stateVersion: 6; sends: SendMemoryV6 };

/**
 * Brings a stored snapshot to the current shape. Version 2 kept one run per hour, which is a valid
 * version-3 `recent` as it is; versions 2 and 3 had no linked ids (empty `identities`). Version 1
 * (no stateVersion) kept `lastSend` and `bulk` maps; they are dropped and the send memory starts empty, which forgets at most a day of bulk and interval
 * history. Versions up to 5 are brought to version 5 and then to version 7 (fromVersion5);
 * version 6 moves its bodies' recipients (fromVersion6); version 7 its per-instance maps
 * (fromVersion7). Anything unrecognisable returns null: rebuild it with replay(log).
 */
export function upgradeState(snapshot: unknown): CustomerPolicyState | null {
  if (typeof snapshot !== 'object' || snapshot === null || typeof (snapshot as { customerId?: unknown }).customerId !== 'string') return null;
  const raw = snapshot as { stateVersion?: unknown; customerId: string };
  if (raw.stateVersion === STATE_VERSION) return raw as CustomerPolicyState;
  const v7 = toVersion7(raw);
  return v7 === null ? null : fromVersion7(v7);
}

/** A snapshot of version 1 to 7 in version 7's shape; null when it is none of them. */
function toVersion7(snapshot: { stateVersion?: unknown; customerId: string }): StateV7 | null {
  const raw = snapshot as Partial<StateV7> & { stateVersion?: unknown; recent?: RecentSendsHourV5[]; lastSend?: unknown; bulk?: unknown; customerId: string };
  if (raw.stateVersion === 7) return raw as StateV7;
  if (raw.stateVersion === 6) {
    const v6 = raw as unknown as StateV6;
    return { ...v6, stateVersion: 7, sends: fromVersion6(v6.sends) };
  }
  const v5 = raw as unknown as StateV5;
  if (raw.stateVersion === 5) return fromVersion5(v5);
  // The guard's memory starts empty: its contacts were not recorded before version 5, so until they
  // write again or are sent to, the people an instance knew count as first contacts (under the
  // plan's caps: an upgraded instance reported no first-connected time). Rebuilding the snapshot
  // from the log (replay) recovers them.
  if (raw.stateVersion === 4) return fromVersion5({ ...v5, guard: emptyGuard(), stateVersion: 5 });
  if (raw.stateVersion === 2 || raw.stateVersion === 3) return fromVersion5({ ...v5, identities: {}, guard: emptyGuard(), stateVersion: 5 });
  if (raw.stateVersion !== undefined) return null;
  const { lastSend: _lastSend, bulk: _bulk, recent: _recent, ...rest } = raw;
  const { instances: _instances, ...initial } = initialPolicyState(raw.customerId);
  return { ...initial, buckets: {}, quality: {}, guard: emptyGuard(), ...rest, stateVersion: 7 };
}

/**
 * Version 5 → 7: every send of `recent` folded into the send memory. Version 5 dropped whole hours
 * past the retention from the list itself, so everything still in it was remembered: `oldestKept`
 * starts below all of it, and moves as before with the next accepted send or hourly sweep.
 */
function fromVersion5(state: StateV5): StateV7 {
  const { recent, ...rest } = state;
  let sends = emptySendMemory(Number.MIN_SAFE_INTEGER);
  for (const run of recent ?? []) for (const send of run.sends) sends = insert(sends, send);
  return { ...rest, stateVersion: 7, sends };
}

/** Version 7 → 8: each instance's entries of `buckets`, `quality` and `guard.instances` in one record; nothing else changes. */
function fromVersion7(state: StateV7): CustomerPolicyState {
  const { buckets, quality, guard, ...rest } = state;
  return { ...rest, stateVersion: STATE_VERSION, instances: instancesFrom({ buckets, quality, guards: guard?.instances }) };
}
