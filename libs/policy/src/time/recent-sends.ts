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

/** A run's sends grouped by short digest (each group in time order). */
type DigestIndex = Map<string, RecentSend[]>;

// A run's sends array is never changed once in a state (rememberSend copies), so its index can be
// kept beside it; a pure cache, rebuilt for arrays it has not seen (e.g. a snapshot read from JSON).
// Only full runs are indexed: they are the ones that stay the same from one decision to the next.
const digestIndexes = new WeakMap<readonly RecentSend[], DigestIndex>();

export function digestIndexOf(sends: readonly RecentSend[]): DigestIndex {
  let index = digestIndexes.get(sends);
  if (!index) {
    index = new Map();
    for (const send of sends) {
      const group = index.get(send.digest);
      if (group) group.push(send);
      else index.set(send.digest, [send]);
    }
    digestIndexes.set(sends, index);
  }
  return index;
}

/**
 * Distinct recipients other than `except` that got this body after `since`. Looks the body up in
 * each run's digest index instead of reading every send of the window: a busy customer's window
 * holds thousands of sends, of which only a campaign's share one body.
 */
export function otherRecipientsOf(runs: readonly RecentSendsHour[], digest: string, since: number, except: string): number {
  const short = shortDigest(digest);
  const seen = new Set<string>();
  for (let h = runs.length - 1; h >= 0; h -= 1) {
    const run = runs[h]!;
    if (run.hour + HOUR_MS <= since) break;
    // The open run changes with every send, so an index of it would be rebuilt every time: read it.
    const sends = run.sends.length < RUN_SIZE ? run.sends : digestIndexOf(run.sends).get(short);
    if (sends) {
      for (const send of sends) if (send.at > since && send.digest === short && send.recipient !== except) seen.add(send.recipient);
    }
    // Sorted across runs: when this run starts inside the past, every earlier one lies there too.
    if ((run.sends[0]?.at ?? Infinity) <= since) break;
  }
  return seen.size;
}
