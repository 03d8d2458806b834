import { RETENTION } from '../config/policy-config.ts';
import { emptyTrie, trieGet, trieSet, trieSweep, type TrieNode } from '../structures/hash-trie.ts';

const HOUR_MS = 3_600_000;

/** One accepted send, as the velocity and bulk rules need it. */
export interface RememberedSend {
  at: number;
  instanceId: string;
  recipient: string;
  /** The full message digest (the memory keys bodies by its first 16 hex digits). */
  digest: string;
}

/**
 * What the rules need of the accepted sends of the retention (RETENTION.bulkMs), shaped for their
 * questions rather than kept as a list:
 *  - velocity: the last send per instance and recipient (`lastSend`): one lookup;
 *  - bulk: per body, the last-send times of its distinct recipients, ascending (`bodies`), and per
 *    body and recipient that time (`bodyRecipients`): a binary search and a lookup.
 *
 * Forgetting is by whole UTC hours, as in the list this replaces (state version 5): a send is
 * remembered while its hour ends after `oldestKept`, which moves to clock − RETENTION.bulkMs on
 * every accepted send and every hourly sweep, and nowhere else. Lookups apply that rule themselves,
 * so the hourly sweep (sweepSends) only frees memory and changes no answer.
 */
export interface SendMemory {
  oldestKept: number;
  /** pairKey(instanceId, recipient) → time of the last accepted send. */
  lastSend: TrieNode<number>;
  /** Body (first 16 hex digits of the digest) → one time per distinct recipient (its last send of the body), ascending. */
  bodies: TrieNode<number[]>;
  /** pairKey(body, recipient) → time of the last accepted send of the body to the recipient. */
  bodyRecipients: TrieNode<number>;
}

export const emptySendMemory = (oldestKept = 0): SendMemory => ({ oldestKept, lastSend: emptyTrie(), bodies: emptyTrie(), bodyRecipients: emptyTrie() });

export const shortDigest = (digest: string): string => digest.slice(0, 16);

/** One key for two strings, unambiguous whatever they contain. */
const pairKey = (a: string, b: string): string => `${a.length}:${a}${b}`;

/** Whether a send at `at` is still remembered: its UTC hour ends after `oldestKept`. */
const remembered = (at: number, oldestKept: number): boolean => Math.floor(at / HOUR_MS) * HOUR_MS + HOUR_MS > oldestKept;

/** Adds an accepted send (a late one too) at event-time watermark `clock`; the memory is not changed in place. */
export function rememberSend(memory: SendMemory, send: RememberedSend, clock: number): SendMemory {
  const oldestKept = clock - RETENTION.bulkMs;
  const moved = oldestKept === memory.oldestKept ? memory : { ...memory, oldestKept };
  return remembered(send.at, oldestKept) ? insert(moved, send) : moved;
}

/** Adds a send without moving `oldestKept` (also how a version-5 list is folded in). */
export function insert(memory: SendMemory, send: RememberedSend): SendMemory {
  const next = { ...memory };
  const pair = pairKey(send.instanceId, send.recipient);
  const last = trieGet(memory.lastSend, pair);
  if (last === undefined || send.at > last) next.lastSend = trieSet(memory.lastSend, pair, send.at);
  const body = shortDigest(send.digest);
  const key = pairKey(body, send.recipient);
  const previous = trieGet(memory.bodyRecipients, key);
  if (previous === undefined || send.at > previous) {
    next.bodyRecipients = trieSet(memory.bodyRecipients, key, send.at);
    next.bodies = trieSet(memory.bodies, body, replaceTime(trieGet(memory.bodies, body) ?? [], previous, send.at));
  }
  return next;
}

/**
 * Physical forgetting is batched: a sweep reads the whole memory, so it runs when event time
 * crosses a multiple of this (6 h), not every hour. The memory then holds at most ~31 h of sends
 * where the list of version 5 held 25 h, and a sweep costs about five entry reads per send.
 */
export const SWEEP_EVERY_MS = 6 * HOUR_MS;

/**
 * The hourly aging of evolve at `clock` (the previous one at `previous`): `oldestKept` moves, as
 * the list of version 5 was filtered; the entries past it are dropped for good when a sweep is due.
 */
export function ageSends(memory: SendMemory, clock: number, previous: number): SendMemory {
  if (Math.floor(clock / SWEEP_EVERY_MS) !== Math.floor(previous / SWEEP_EVERY_MS)) return sweepSends(memory, clock);
  const oldestKept = clock - RETENTION.bulkMs;
  return oldestKept === memory.oldestKept ? memory : { ...memory, oldestKept };
}

/** Forgets what is past `oldestKept` for good, at the state's clock. */
export function sweepSends(memory: SendMemory, clock: number): SendMemory {
  const oldestKept = clock - RETENTION.bulkMs;
  // remembered(at, oldestKept) for every at, as one bound: the start of the hour oldestKept falls in.
  const from = Math.floor(oldestKept / HOUR_MS) * HOUR_MS;
  const keepTime = (_key: string, at: number) => (at >= from ? at : undefined);
  return {
    oldestKept,
    lastSend: trieSweep(memory.lastSend, keepTime),
    bodyRecipients: trieSweep(memory.bodyRecipients, keepTime),
    bodies: trieSweep(memory.bodies, (_key, times) => {
      // Most bodies went to one recipient, or are wholly kept or wholly past: no search for those.
      if (times[0]! >= from) return times;
      if (times[times.length - 1]! < from) return undefined;
      const first = firstIndex(times, (at) => at >= from);
      return first === times.length ? undefined : first === 0 ? times : times.slice(first);
    }),
  };
}

/**
 * Time of the last accepted send from this instance to this recipient, if it is after `since`
 * (a send later than the command counts too: a late command waits for it as before).
 */
export function lastSendTo(memory: SendMemory, instanceId: string, recipient: string, since: number): number | undefined {
  const at = trieGet(memory.lastSend, pairKey(instanceId, recipient));
  return at !== undefined && at > since && remembered(at, memory.oldestKept) ? at : undefined;
}

/** Distinct recipients other than `except` that got this body (by digest) after `since`. */
export function otherRecipientsOf(memory: SendMemory, digest: string, since: number, except: string): number {
  const body = shortDigest(digest);
  const times = trieGet(memory.bodies, body);
  if (times === undefined) return 0;
  const counts = (at: number) => at > since && remembered(at, memory.oldestKept);
  const own = trieGet(memory.bodyRecipients, pairKey(body, except));
  return times.length - firstIndex(times, counts) - (own !== undefined && counts(own) ? 1 : 0);
}

/** First index of the ascending `times` where `holds` (false up to a point, true from there) is true. */
function firstIndex(times: readonly number[], holds: (at: number) => boolean): number {
  let low = 0;
  let high = times.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (holds(times[middle]!)) high = middle;
    else low = middle + 1;
  }
  return low;
}

/** The ascending `times` with one `previous` (if given) replaced by `at`: a copy of one body's recipients. */
function replaceTime(times: readonly number[], previous: number | undefined, at: number): number[] {
  const next = times.slice();
  if (previous !== undefined) {
    const index = firstIndex(next, (t) => t >= previous);
    next.splice(index, 1);
  }
  next.splice(firstIndex(next, (t) => t > at), 0, at);
  return next;
}
