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

/** The accepted sends of one UTC hour, in fold order. */
export interface RecentSendsHour {
  hour: number;
  sends: RecentSend[];
}

export const shortDigest = (digest: string): string => digest.slice(0, 16);

/**
 * Appends a send and forgets whole hours past the retention. Hourly chunks keep a fold cheap:
 * only the current hour's array is copied, never a day of sends (plain objects used as big maps
 * would be copied on every event, which is what made an earlier version slow). Each hour stays
 * sorted by time (a late send is inserted in place), so lookups can stop at the window's start.
 */
export function rememberSend(hours: readonly RecentSendsHour[], send: RecentSend, clock: number): RecentSendsHour[] {
  const hour = Math.floor(send.at / HOUR_MS) * HOUR_MS;
  const oldestKept = clock - RETENTION.bulkMs;
  const kept = hours[0] && hours[0].hour + HOUR_MS <= oldestKept ? hours.filter((h) => h.hour + HOUR_MS > oldestKept) : [...hours];
  const index = kept.findIndex((h) => h.hour === hour);
  if (index >= 0) {
    kept[index] = { hour, sends: insertByTime(kept[index]!.sends, send) };
  } else if (hour + HOUR_MS > oldestKept) {
    kept.push({ hour, sends: [send] });
    kept.sort((a, b) => a.hour - b.hour);
  }
  return kept;
}

function insertByTime(sends: readonly RecentSend[], send: RecentSend): RecentSend[] {
  let at = sends.length;
  while (at > 0 && sends[at - 1]!.at > send.at) at -= 1;
  return [...sends.slice(0, at), send, ...sends.slice(at)];
}

/** Time of the last accepted send from this instance to this recipient after `since`, if any. */
export function lastSendTo(hours: readonly RecentSendsHour[], instanceId: string, recipient: string, since: number): number | undefined {
  for (let h = hours.length - 1; h >= 0; h -= 1) {
    const chunk = hours[h]!;
    if (chunk.hour + HOUR_MS <= since) return undefined;
    for (let i = chunk.sends.length - 1; i >= 0; i -= 1) {
      const send = chunk.sends[i]!;
      if (send.at <= since) return undefined;
      if (send.instanceId === instanceId && send.recipient === recipient) return send.at;
    }
  }
  return undefined;
}

/** Distinct recipients other than `except` that got this body after `since`. */
export function otherRecipientsOf(hours: readonly RecentSendsHour[], digest: string, since: number, except: string): number {
  const short = shortDigest(digest);
  const seen = new Set<string>();
  for (let h = hours.length - 1; h >= 0; h -= 1) {
    const chunk = hours[h]!;
    if (chunk.hour + HOUR_MS <= since) break;
    for (let i = chunk.sends.length - 1; i >= 0; i -= 1) {
      const send = chunk.sends[i]!;
      if (send.at <= since) break;
      if (send.digest === short && send.recipient !== except) seen.add(send.recipient);
    }
  }
  return seen.size;
}
