import type { RestrictionSignal } from './events.ts';

/**
 * Version 7's shape of the number guard's part of the state (`state.guard`, read only by the
 * upgrade to version 8, which keeps each InstanceGuard in its instance's record: instances.ts).
 */
export interface GuardState {
  instances: Record<string, InstanceGuard>;
}

/**
 * The number guard of one instance (`guard` of its record in `state.instances`): plain JSON. Its
 * windows are bounded (a rolling day of first contacts, at most GUARD_RETENTION.maxSignals
 * signal times); the contact set is not: it grows with the people the instance talked to, like
 * `suppressed` and `identities` grow with people, never with traffic to the same people.
 */
export interface InstanceGuard {
  /** Earliest time the instance was seen connected (InstanceConnected); null: never reported (paired before the guard). */
  firstConnectedAt: number | null;
  /**
   * The people this instance knows: recipients of its accepted sends and senders who wrote to it
   * (ContactLearned), as E.164 or canonical `<digits>@lid`. Empty, or 100 shards by the key's last
   * two digits (contactShard), each sorted: a fold copies one shard and the list, not the whole set.
   */
  contacts: string[][];
  /** Times of accepted sends to first contacts within the last GUARD_RETENTION.firstContactsMs, ascending. */
  firstContacts: number[];
  /** Times of restriction signals, ascending, pruned to GUARD_RETENTION (cleared when lifted). */
  signals: number[];
  /** The restriction set by the engine's last InstanceRestricted; null when none or lifted. */
  restriction: { signal: RestrictionSignal; at: number; until: number } | null;
}

export const emptyGuard = (): GuardState => ({ instances: {} });

export const emptyInstanceGuard = (): InstanceGuard => ({ firstConnectedAt: null, contacts: [], firstContacts: [], signals: [], restriction: null });
