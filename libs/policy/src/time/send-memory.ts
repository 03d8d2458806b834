import { RETENTION } from '../config/policy-config.ts';
import { emptyTrie, trieEntriesV6, trieGet, trieSet, trieSweep, trieUpdate, type TrieNode, type TrieNodeV6 } from '../structures/hash-trie.ts';
import { firstIndexWhere } from '../structures/sorted.ts';

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
 *  - bulk: per body its distinct recipients and their last-send times (`bodies`, one BodySends
 *    per body): a lookup, then two binary searches in the body's own arrays.
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
  /** Body (first 16 hex digits of the digest) → its distinct recipients and their last sends of it. */
  bodies: TrieNode<BodySends>;
}

/**
 * One body's recipients, in one trie entry (state version 7): version 6 kept them in a second trie
 * keyed by body and recipient, so each accepted send wrote three tries and the sweep read every
 * send twice (issue 29). Sorted, so the same sends give the same JSON whatever order they came in.
 */
export interface BodySends {
  /** The recipients, ascending (as strings compare). */
  to: string[];
  /** `at[i]`: time of the last accepted send of the body to `to[i]`. */
  at: number[];
  /** The same times ascending: the bulk rule counts those after a moment with one binary search. */
  times: number[];
}

export const emptySendMemory = (oldestKept = 0): SendMemory => ({ oldestKept, lastSend: emptyTrie(), bodies: emptyTrie() });

export const shortDigest = (digest: string): string => digest.slice(0, 16);

/** One key for two strings, unambiguous whatever they contain. */
const pairKey = (a: string, b: string): string => `${a.length}:${a}${b}`;

/** Whether a send at `at` is still remembered: its UTC hour ends after `oldestKept`. */
const remembered = (at: number, oldestKept: number): boolean => Math.floor(at / HOUR_MS) * HOUR_MS + HOUR_MS > oldestKept;

/** Adds an accepted send (a late one too) at event-time watermark `clock`; the memory is not changed in place. */
export function rememberSend(memory: SendMemory, send: RememberedSend, clock: number): SendMemory {
  const oldestKept = clock - RETENTION.bulkMs;
  if (!remembered(send.at, oldestKept)) return oldestKept === memory.oldestKept ? memory : { ...memory, oldestKept };
  return insertAt(memory, send, oldestKept);
}

/** Adds a send without moving `oldestKept` (also how a version-5 list is folded in). */
export const insert = (memory: SendMemory, send: RememberedSend): SendMemory => insertAt(memory, send, memory.oldestKept);

/** Adds a send and sets `oldestKept`, in one copy of the memory; each trie is read and written in one walk of the key's path. */
function insertAt(memory: SendMemory, send: RememberedSend, oldestKept: number): SendMemory {
  const lastSend = trieUpdate(memory.lastSend, pairKey(send.instanceId, send.recipient), (last) => (last === undefined || send.at > last ? send.at : undefined));
  const bodies = trieUpdate(memory.bodies, shortDigest(send.digest), (sends) => withRecipient(sends, send.recipient, send.at));
  return lastSend === memory.lastSend && bodies === memory.bodies && oldestKept === memory.oldestKept ? memory : { oldestKept, lastSend, bodies };
}

/** The body's sends with `recipient` last sent it at `at`; undefined when that changes nothing (it had a later one). */
function withRecipient(sends: BodySends | undefined, recipient: string, at: number): BodySends | undefined {
  // A body sent once (most are: texts carry names, numbers, codes) shares one array for both lists of times.
  if (sends === undefined) {
    const times = [at];
    return { to: [recipient], at: times, times };
  }
  const index = indexOfKey(sends.to, recipient);
  if (sends.to[index] === recipient) {
    const previous = sends.at[index]!;
    if (at <= previous) return undefined;
    const atNext = sends.at.slice();
    atNext[index] = at;
    return { to: sends.to, at: atNext, times: replaceTime(sends.times, previous, at) };
  }
  const to = sends.to.slice();
  to.splice(index, 0, recipient);
  const atNext = sends.at.slice();
  atNext.splice(index, 0, at);
  return { to, at: atNext, times: replaceTime(sends.times, undefined, at) };
}

/** Where `key` is, or would go, in the ascending `keys`. */
const indexOfKey = (keys: readonly string[], key: string): number => firstIndexWhere(keys, (k) => k >= key);

/**
 * Physical forgetting is batched: a sweep reads the whole memory, so it runs when event time
 * crosses a multiple of this (6 h), not every hour. The memory then holds at most ~31 h of sends
 * where the list of version 5 held 25 h, and a sweep costs about three entry reads per send.
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
    bodies: trieSweep(memory.bodies, (_key, sends) => {
      // Most bodies went to one recipient, or are wholly kept or wholly past: nothing to filter for those.
      const { times } = sends;
      if (times[0]! >= from) return sends;
      if (times[times.length - 1]! < from) return undefined;
      const to: string[] = [];
      const at: number[] = [];
      for (let index = 0; index < sends.to.length; index += 1) {
        if (sends.at[index]! < from) continue;
        to.push(sends.to[index]!);
        at.push(sends.at[index]!);
      }
      return { to, at, times: times.slice(firstIndexWhere(times, (t) => t >= from)) };
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
  const sends = trieGet(memory.bodies, shortDigest(digest));
  if (sends === undefined) return 0;
  const counts = (at: number) => at > since && remembered(at, memory.oldestKept);
  const index = indexOfKey(sends.to, except);
  const own = sends.to[index] === except && counts(sends.at[index]!);
  return sends.times.length - firstIndexWhere(sends.times, counts) - (own ? 1 : 0);
}

/** The ascending `times` with one `previous` (if given) replaced by `at`: a copy of one body's recipients. */
function replaceTime(times: readonly number[], previous: number | undefined, at: number): number[] {
  const next = times.slice();
  if (previous !== undefined) {
    const index = firstIndexWhere(next, (t) => t >= previous);
    next.splice(index, 1);
  }
  next.splice(firstIndexWhere(next, (t) => t > at), 0, at);
  return next;
}

/** Version 6's send memory: tries of version 6's shape, each body's recipients in a trie of their own keyed pairKey(body, recipient). */
export interface SendMemoryV6 {
  oldestKept: number;
  lastSend: TrieNodeV6<number>;
  bodies: TrieNodeV6<number[]>;
  bodyRecipients: TrieNodeV6<number>;
}

/**
 * Version 6 → 7: the tries rebuilt in version 7's shape, and every (body, recipient) time of
 * `bodyRecipients` moved into its body's entry (whose sorted times are rebuilt from them).
 * `oldestKept` is kept, and nothing past it is dropped: the same lookups answer the same.
 */
export function fromVersion6(memory: SendMemoryV6): SendMemory {
  let lastSend = emptyTrie<number>();
  for (const [key, at] of trieEntriesV6(memory.lastSend)) lastSend = trieSet(lastSend, key, at);
  let bodies = emptyTrie<BodySends>();
  for (const [key, at] of trieEntriesV6(memory.bodyRecipients)) {
    const colon = key.indexOf(':');
    const end = colon + 1 + Number(key.slice(0, colon));
    bodies = trieUpdate(bodies, key.slice(colon + 1, end), (sends) => withRecipient(sends, key.slice(end), at));
  }
  return { oldestKept: memory.oldestKept, lastSend, bodies };
}
