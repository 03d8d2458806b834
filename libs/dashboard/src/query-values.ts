// Reading the dashboard pages' query strings and writing their links, once for every page: a
// value is one trimmed string or a problem told in words, times are UTC, and a search by part of
// a number is its digits. Nothing a person types reaches Postgres unchecked. Pure.
import { textProblem } from '@gw/contract';

/** The query string as fastify parses it: a repeated key is an array. */
export type RawQuery = Record<string, unknown>;

const DAY_MS = 86_400_000;
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;

export interface SingleOptions {
  /** Longest value accepted (default 200 characters). */
  max?: number;
  /**
   * True (the default) where a page goes on without the value: the problem says it is ignored.
   * False where the request is refused instead (the problem ends there).
   */
  ignored?: boolean;
}

/** A query value as one trimmed string ('' when absent); given twice, or unusable text, is a problem. */
export function single(raw: RawQuery, key: string, label: string, problems: string[], options: SingleOptions = {}): string {
  const end = options.ignored === false ? '.' : '; it is ignored.';
  const value = raw[key];
  if (value === undefined) return '';
  if (typeof value !== 'string') {
    problems.push(`${label} was given more than once${end}`);
    return '';
  }
  const trimmed = value.trim();
  const problem = textProblem(trimmed, options.max ?? 200) ?? (CONTROL.test(trimmed) ? 'contains a control character' : null);
  if (problem) {
    problems.push(`${label} ${problem}${end}`);
    return '';
  }
  return trimmed;
}

/**
 * A day (YYYY-MM-DD) or a time to the minute or second (YYYY-MM-DD HH:MM[:SS], or with a T, as a
 * datetime-local input sends it), read as UTC; `step` is the unit typed, so a "to" includes the
 * whole of it. Null when it is not one.
 */
export function parseUtc(value: string): { at: Date; step: number } | null {
  const match = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2}))?)?$/.exec(value);
  if (!match) return null;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const [hour, minute, second] = [Number(match[4] ?? 0), Number(match[5] ?? 0), Number(match[6] ?? 0)];
  if (year < 2000 || year > 9998 || hour > 23 || minute > 59 || second > 59) return null;
  const at = new Date(Date.UTC(year, month - 1, day, hour, minute, second));
  // 2026-02-30 would roll over into March: not a day of the calendar.
  if (at.getUTCFullYear() !== year || at.getUTCMonth() !== month - 1 || at.getUTCDate() !== day) return null;
  const step = match[6] !== undefined ? 1000 : match[4] !== undefined ? 60_000 : DAY_MS;
  return { at, step };
}

/** A calendar day written YYYY-MM-DD (what a date input sends), as UTC midnight; null when it is not a real day. */
export function parseDay(value: string): Date | null {
  const parsed = parseUtc(value);
  return parsed && parsed.step === DAY_MS ? parsed.at : null;
}

/** One value of a fixed list ('' or absent: the first, which means "all"). */
export function oneOf<T extends string>(raw: RawQuery, key: string, label: string, allowed: readonly T[], problems: string[]): T {
  const value = single(raw, key, label, problems);
  if (value === '') return allowed[0]!;
  if ((allowed as readonly string[]).includes(value)) return value as T;
  problems.push(`${label} “${value}” is not one of the choices; all are shown.`);
  return allowed[0]!;
}

/** A from/to pair of days: [from 00:00 UTC, the day after `to` 00:00 UTC), both optional. */
export interface DayRange {
  /** As typed (only when valid), for the form. */
  from: string;
  to: string;
  /** Inclusive lower bound. */
  fromAt: Date | null;
  /** Exclusive upper bound: the start of the day after `to`. */
  toBefore: Date | null;
}

export function dayRange(raw: RawQuery, problems: string[]): DayRange {
  const read = (key: string, label: string) => {
    const value = single(raw, key, label, problems);
    if (value === '') return { text: '', at: null };
    const at = parseDay(value);
    if (!at) {
      problems.push(`${label} “${value}” is not a date (write it as YYYY-MM-DD); it is ignored.`);
      return { text: '', at: null };
    }
    return { text: value, at };
  };
  const from = read('from', 'The “from” date');
  const to = read('to', 'The “to” date');
  if (from.at && to.at && from.at > to.at) {
    problems.push('The “from” date is after the “to” date; both are ignored.');
    return { from: '', to: '', fromAt: null, toBefore: null };
  }
  return { from: from.text, to: to.text, fromAt: from.at, toBefore: to.at ? new Date(to.at.getTime() + DAY_MS) : null };
}

/**
 * The digits of a "number contains" search: what a person types (+, spaces, brackets, dots and
 * dashes are fine), reduced to digits; null when something else is in it or no digit is.
 */
export function phoneDigits(value: string): string | null {
  if (!/^[+\d\s().-]{1,40}$/.test(value)) return null;
  const digits = value.replace(/\D/g, '');
  return digits.length >= 1 && digits.length <= 15 ? digits : null;
}

/** An ILIKE pattern that finds `text` anywhere, its own %, _ and \ taken literally (the default escape is \). */
export const containsPattern = (text: string) => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/** The decision filter of the policy log and the message search. */
export const DECISIONS = ['all', 'accepted', 'refused'] as const;
export type DecisionFilter = (typeof DECISIONS)[number];

/** A link to `path` with these query values; empty values are left out. */
export function hrefWith(path: string, values: Record<string, string | number | null | undefined>, hash = ''): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(values)) if (value !== '' && value !== null && value !== undefined) params.set(key, String(value));
  const query = params.toString();
  return `${path}${query ? `?${query}` : ''}${hash}`;
}
