import { RETENTION } from '../config/policy-config.ts';

const HOUR_MS = 3_600_000;

/** One accepted send, as remembered for the per-recipient interval and bulk detection. */
export interface RecentSend {
  at: number;
  instanceId: string;
  recipient: string;
  /** The first 16 hex digits of the message digest: plenty to tell bodies apart, a quarter of the size. */
  digest: string;
}

/**
 * A run of accepted sends within one UTC hour, in fold order. An hour may hold several runs
 * (a busy hour is split every RUN_SIZE sends); across runs the sends stay sorted by time.
 */
export interface RecentSendsHour {
  hour: number;
  sends: RecentSend[];
}

/**
 * Sends per run before a new one is started. A fold copies only the open run, never a busy hour
 * (an hour of one send every 50 ms is 72,000 sends); a closed run is never changed again, so its
 * digest index is built once (digestIndexOf).
 */
export const RUN_SIZE = 32;

export const shortDigest = (digest: string): string => digest.slice(0, 16);

const hourOf = (at: number): number => Math.floor(at / HOUR_MS) * HOUR_MS;

/**
 * Appends a send and forgets whole hours past the retention. Runs keep a fold cheap: only the
 * open run is copied, never an hour of sends (plain objects used as big maps would be copied on
 * every event, which is what made an earlier version slow). Sends stay sorted by time across
 * runs (a late send is inserted in place), so lookups can stop at the window's start.
 */
export function rememberSend(runs: readonly RecentSendsHour[], send: RecentSend, clock: number): RecentSendsHour[] {
  const kept = rememberSendIn(runs, send, clock);
  // Every send kept came from `runs` or is `send`: the summary of `runs` plus this digest covers them.
  const summary = summaryOf(runs, false);
  if (summary) carrySummary(kept, summary, send.digest);
  return kept;
}

function rememberSendIn(runs: readonly RecentSendsHour[], send: RecentSend, clock: number): RecentSendsHour[] {
  const hour = hourOf(send.at);
  const oldestKept = clock - RETENTION.bulkMs;
  const kept = runs[0] && runs[0].hour + HOUR_MS <= oldestKept ? runs.filter((r) => r.hour + HOUR_MS > oldestKept) : [...runs];
  if (hour + HOUR_MS <= oldestKept) return kept;
  const index = runFor(kept, hour, send.at);
  if (index < 0) {
    // The first send of its hour: a new run, in hour order.
    const at = kept.findIndex((r) => r.hour > hour);
    kept.splice(at < 0 ? kept.length : at, 0, { hour, sends: [send] });
    return kept;
  }
  const run = kept[index]!;
  const last = run.sends[run.sends.length - 1];
  const isNewest = index === kept.length - 1 || kept[index + 1]!.hour !== hour;
  if (isNewest && last !== undefined && send.at >= last.at && run.sends.length >= RUN_SIZE) kept.splice(index + 1, 0, { hour, sends: [send] });
  else kept[index] = { hour, sends: insertByTime(run.sends, send) };
  return kept;
}

/** The run of `hour` a send at `at` belongs in: the last one starting at or before it, else the hour's first; -1 when the hour has none. */
function runFor(runs: readonly RecentSendsHour[], hour: number, at: number): number {
  let first = -1;
  for (let i = runs.length - 1; i >= 0; i -= 1) {
    const run = runs[i]!;
    if (run.hour < hour) break;
    if (run.hour > hour) continue;
    if ((run.sends[0]?.at ?? at) <= at) return i;
    first = i;
  }
  return first;
}

function insertByTime(sends: readonly RecentSend[], send: RecentSend): RecentSend[] {
  let at = sends.length;
  while (at > 0 && sends[at - 1]!.at > send.at) at -= 1;
  return [...sends.slice(0, at), send, ...sends.slice(at)];
}

/** Time of the last accepted send from this instance to this recipient after `since`, if any. */
export function lastSendTo(runs: readonly RecentSendsHour[], instanceId: string, recipient: string, since: number): number | undefined {
  for (let h = runs.length - 1; h >= 0; h -= 1) {
    const run = runs[h]!;
    if (run.hour + HOUR_MS <= since) return undefined;
    for (let i = run.sends.length - 1; i >= 0; i -= 1) {
      const send = run.sends[i]!;
      if (send.at <= since) return undefined;
      if (send.instanceId === instanceId && send.recipient === recipient) return send.at;
    }
  }
  return undefined;
}

/**
 * A run's sends grouped by short digest (each group in time order), and a 512-bit Bloom filter of
 * those digests: a lookup of a body the run never carried (nearly every lookup) is answered by two
 * bit tests, without hashing the string into the map.
 */
interface DigestIndex {
  groups: Map<string, RecentSend[]>;
  bloom: Uint32Array;
}

const BLOOM_BITS = 512;
// The two filter positions of the last string hashed (bloomPositions); module state saves an allocation per lookup.
let bit1 = 0;
let bit2 = 0;
let hashA = 0;
let hashB = 0;

/** Two positions in the filter for a string (FNV-1a and a multiplicative hash of its code units). */
function bloomPositions(text: string): void {
  let a = 0x811c9dc5;
  let b = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    a = Math.imul(a ^ c, 16_777_619);
    b = (Math.imul(b, 31) + c) | 0;
  }
  hashA = a >>> 0;
  hashB = b >>> 0;
  bit1 = hashA % BLOOM_BITS;
  bit2 = hashB % BLOOM_BITS;
}

const mayHold = (bloom: Uint32Array): boolean => (bloom[bit1 >>> 5]! & (1 << (bit1 & 31))) !== 0 && (bloom[bit2 >>> 5]! & (1 << (bit2 & 31))) !== 0;

// A run's sends array is never changed once in a state (rememberSend copies), so its index can be
// kept beside it; a pure cache, rebuilt for arrays it has not seen (e.g. a snapshot read from JSON).
// Only full runs are indexed: they are the ones that stay the same from one decision to the next.
// The index hangs off the array itself under a symbol that is not enumerable: JSON, structured
// clones, Object.keys and deep equality never see it, and reading it costs a property load where
// a WeakMap lookup costs a hash probe (a lookup reads every run of the window).
const DIGEST_INDEX = Symbol('digestIndex');
type Indexed = readonly RecentSend[] & { [DIGEST_INDEX]?: DigestIndex };

// Arrays that cannot take a property (frozen ones) keep their index here instead.
const sealedIndexes = new WeakMap<readonly RecentSend[], DigestIndex>();

function digestIndexOf(sends: readonly RecentSend[]): DigestIndex {
  let index = (sends as Indexed)[DIGEST_INDEX] ?? sealedIndexes.get(sends);
  if (!index) {
    index = { groups: new Map(), bloom: new Uint32Array(BLOOM_BITS / 32) };
    for (const send of sends) {
      const group = index.groups.get(send.digest);
      if (group) group.push(send);
      else index.groups.set(send.digest, [send]);
      bloomPositions(send.digest);
      index.bloom[bit1 >>> 5]! |= 1 << (bit1 & 31);
      index.bloom[bit2 >>> 5]! |= 1 << (bit2 & 31);
    }
    if (Object.isExtensible(sends)) Object.defineProperty(sends, DIGEST_INDEX, { value: index, enumerable: false, writable: false, configurable: false });
    else sealedIndexes.set(sends, index);
  }
  return index;
}

/** The sends of a run with this short digest (time order). */
export function sendsWithDigest(sends: readonly RecentSend[], short: string): readonly RecentSend[] {
  return digestIndexOf(sends).groups.get(short) ?? [];
}

/**
 * A Bloom filter over the digests of every send of a runs array (a state's `recent`), so that the
 * lookup of a body no remembered send carries (nearly every lookup: bodies hold order numbers,
 * codes, names) answers 0 without reading the window. A filter may hold more than its array's
 * digests, never fewer: it is shared along a line of states (each rememberSend adds the new digest
 * to its parent's filter, and a subset of an array, e.g. after a prune, may keep it), which only
 * costs false positives, answered by the exact lookup. It is remade for its array when too full.
 */
interface RecentSummary {
  bits: number;
  words: Uint32Array;
  /** Digests added; past bits / 12 the filter is remade for the array at hand. */
  count: number;
}

const SUMMARY = Symbol('recentSummary');
type Summarised = readonly RecentSendsHour[] & { [SUMMARY]?: RecentSummary };

// Arrays that cannot take a property (frozen ones) keep their summary here instead.
const sealedSummaries = new WeakMap<readonly RecentSendsHour[], RecentSummary>();

function attach(runs: readonly RecentSendsHour[], summary: RecentSummary): void {
  if (Object.isExtensible(runs)) Object.defineProperty(runs, SUMMARY, { value: summary, enumerable: false, writable: false, configurable: false });
  else sealedSummaries.set(runs, summary);
}

const attached = (runs: readonly RecentSendsHour[]): RecentSummary | undefined => (runs as Summarised)[SUMMARY] ?? sealedSummaries.get(runs);

function addDigest(summary: RecentSummary, digest: string): void {
  bloomPositionsIn(digest, summary.bits);
  summary.words[bit1 >>> 5]! |= 1 << (bit1 & 31);
  summary.words[bit2 >>> 5]! |= 1 << (bit2 & 31);
  summary.count++;
}

/** The summary of an array (made when `make` and it has none, or when its filter is too full); null otherwise. */
function summaryOf(runs: readonly RecentSendsHour[], make: boolean): RecentSummary | null {
  const summary = attached(runs);
  if (summary && summary.count * 12 <= summary.bits) return summary;
  if (!make && !summary) return null;
  let sends = 0;
  for (const run of runs) sends += run.sends.length;
  let bits = 8192;
  while (bits < sends * 16) bits *= 2;
  const made: RecentSummary = { bits, words: new Uint32Array(bits / 32), count: 0 };
  for (const run of runs) for (const send of run.sends) addDigest(made, send.digest);
  if ((runs as Summarised)[SUMMARY]) return made; // a full one is fixed on the array: this one serves once
  attach(runs, made);
  return made;
}

function carrySummary(kept: RecentSendsHour[], from: RecentSummary, digest: string): void {
  if (from.count * 12 > from.bits) return; // too full: the next lookup remakes one for `kept`
  addDigest(from, digest);
  attach(kept, from);
}

/**
 * Keeps the summary of `from` for `to`, an array holding only runs of `from` (whole, as they were):
 * every digest of `to` is in it. For prune, which filters the runs of a state.
 */
export function carryRecentSummary(from: readonly RecentSendsHour[], to: RecentSendsHour[]): RecentSendsHour[] {
  const summary = attached(from);
  if (summary && to !== from && !attached(to)) attach(to, summary);
  return to;
}

function bloomPositionsIn(text: string, bits: number): void {
  bloomPositions(text);
  // bloomPositions took the hashes modulo 512; take them again modulo this filter's size.
  bit1 = hashA % bits;
  bit2 = hashB % bits;
}

/**
 * Distinct recipients other than `except` that got this body after `since`. Looks the body up in
 * each run's digest index instead of reading every send of the window: a busy customer's window
 * holds thousands of sends, of which only a campaign's share one body.
 */
export function otherRecipientsOf(runs: readonly RecentSendsHour[], digest: string, since: number, except: string): number {
  const short = shortDigest(digest);
  // No send of the array carries this body: nothing to count, whatever the window.
  const summary = runs.length > 0 ? summaryOf(runs, true) : null;
  if (summary) {
    bloomPositionsIn(short, summary.bits);
    if ((summary.words[bit1 >>> 5]! & (1 << (bit1 & 31))) === 0 || (summary.words[bit2 >>> 5]! & (1 << (bit2 & 31))) === 0) return 0;
  }
  bloomPositions(short);
  const first = bit1;
  const second = bit2;
  // Nearly every body is new: the set is only made once a send of this body turns up.
  let seen: Set<string> | null = null;
  for (let h = runs.length - 1; h >= 0; h -= 1) {
    const run = runs[h]!;
    if (run.hour + HOUR_MS <= since) break;
    let sends: readonly RecentSend[] | undefined = run.sends;
    // The open run changes with every send, so an index of it would be rebuilt every time: read it.
    if (sends.length >= RUN_SIZE) {
      const index = digestIndexOf(sends);
      bit1 = first;
      bit2 = second;
      sends = mayHold(index.bloom) ? index.groups.get(short) : undefined;
    }
    if (sends) {
      for (const send of sends) {
        if (send.at > since && send.digest === short && send.recipient !== except) (seen ??= new Set()).add(send.recipient);
      }
    }
    // Sorted across runs: when this run starts inside the past, every earlier one lies there too.
    if ((run.sends[0]?.at ?? Infinity) <= since) break;
  }
  return seen === null ? 0 : seen.size;
}
