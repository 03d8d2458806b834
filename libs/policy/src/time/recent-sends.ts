import { RETENTION } from '../config/policy-config.ts';
import type { RecentSendsCache } from './recent-sends-cache.ts';

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
 * Sends per run before a new one is started. The state is never mutated, so a fold copies what it
 * changes: only the open run, never a busy hour (an hour of one send every 50 ms is 72,000 sends).
 */
export const RUN_SIZE = 32;

export const shortDigest = (digest: string): string => digest.slice(0, 16);

const hourOf = (at: number): number => Math.floor(at / HOUR_MS) * HOUR_MS;

/**
 * Appends a send and forgets whole hours past the retention. Sends stay sorted by time across
 * runs (a late send is inserted in place), so lookups can stop at the window's start.
 */
export function rememberSend(runs: readonly RecentSendsHour[], send: RecentSend, clock: number): RecentSendsHour[] {
  const hour = hourOf(send.at);
  const oldestKept = clock - RETENTION.bulkMs;
  const kept = runs.filter((r) => r.hour + HOUR_MS > oldestKept);
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

/**
 * Time of the last accepted send from this instance to this recipient after `since`, if any.
 * Sends are sorted by time across runs, so the walk (newest first) stops at the window's start.
 */
export function lastSendTo(runs: readonly RecentSendsHour[], instanceId: string, recipient: string, since: number): number | undefined {
  for (let h = runs.length - 1; h >= 0; h -= 1) {
    const sends = runs[h]!.sends;
    for (let i = sends.length - 1; i >= 0; i -= 1) {
      const send = sends[i]!;
      if (send.at <= since) return undefined;
      if (send.instanceId === instanceId && send.recipient === recipient) return send.at;
    }
  }
  return undefined;
}

/**
 * Distinct recipients other than `except` that got this body (by digest) after `since`. With a
 * cache, a full run lying wholly inside the window is looked up by body instead of read send by
 * send; the open run and the one the window starts in are read.
 */
export function otherRecipientsOf(runs: readonly RecentSendsHour[], digest: string, since: number, except: string, cache?: RecentSendsCache): number {
  const short = shortDigest(digest);
  const recipients = new Set<string>();
  for (let h = runs.length - 1; h >= 0; h -= 1) {
    const sends = runs[h]!.sends;
    if (cache && sends.length >= RUN_SIZE && sends[0]!.at > since) {
      for (const send of cache.sendsWithBody(sends, short)) if (send.recipient !== except) recipients.add(send.recipient);
      continue;
    }
    for (let i = sends.length - 1; i >= 0; i -= 1) {
      const send = sends[i]!;
      if (send.at <= since) return recipients.size;
      if (send.digest === short && send.recipient !== except) recipients.add(send.recipient);
    }
  }
  return recipients.size;
}
