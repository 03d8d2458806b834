/** Small helpers over the guard's ascending lists of event times. */
import { firstIndexWhere } from '../structures/sorted.ts';

/** `times` with `at` inserted in order (a late event may be older than the newest). */
export function insertTime(times: readonly number[], at: number): number[] {
  let index = times.length;
  while (index > 0 && times[index - 1]! > at) index -= 1;
  return [...times.slice(0, index), at, ...times.slice(index)];
}

/** The times after `cutoff` (exclusive), the newest `max` of them at most. */
export function keepAfter(times: readonly number[], cutoff: number, max = Infinity): number[] {
  const kept = times.filter((t) => t > cutoff);
  return kept.length > max ? kept.slice(kept.length - max) : kept;
}

/** First index of the ascending `times` whose time is above `bound`. */
const firstAbove = (times: readonly number[], bound: number): number => firstIndexWhere(times, (at) => at > bound);

/**
 * The window of `windowMs` ending at `at` over the ascending `times` (after at - windowMs, not
 * after `at`), as index bounds: `times.slice(start, end)` are in it. No copy: the rules run per send.
 */
export function windowOf(times: readonly number[], at: number, windowMs: number): { start: number; end: number; count: number } {
  const start = firstAbove(times, at - windowMs);
  const end = Math.max(start, firstAbove(times, at));
  return { start, end, count: end - start };
}

/** How many of the ascending `times` fall in the window of `windowMs` ending at `at`. */
export const countWithin = (times: readonly number[], at: number, windowMs: number): number => windowOf(times, at, windowMs).count;
