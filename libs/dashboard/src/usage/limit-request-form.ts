// The form that asks for higher limits: a daily and/or a monthly limit above the current ones
// (whole numbers; "2,000" and "2 000" are read as 2000), and what the customer sends and why
// (required, the contract's text rule). Pure: the body and the current limits in, the request or
// the words of what is wrong out.
import { LIMIT_REQUEST_MAX, LIMIT_REQUEST_TEXT_MAX } from '@gw/accounts';
import { textProblem } from '@gw/contract';
import { count } from '../format.ts';

export interface LimitRequestValues {
  daily: string;
  monthly: string;
  reason: string;
}

export type ParsedLimitRequest =
  | { ok: true; daily: number | null; monthly: number | null; reason: string }
  | { ok: false; field: 'daily' | 'monthly' | 'reason'; message: string };

const field = (value: unknown): string => (typeof value === 'string' ? value.trim() : '');

/** The values to show again in the form, as typed (bounded). */
export function formValues(body: unknown): LimitRequestValues {
  const b = (body ?? {}) as Record<string, unknown>;
  return { daily: field(b.daily).slice(0, 40), monthly: field(b.monthly).slice(0, 40), reason: field(b.reason).slice(0, LIMIT_REQUEST_TEXT_MAX) };
}

/** A whole number as people write it, with thousands separated by commas or spaces; null when empty, NaN when not a number. */
export function readLimit(text: string): number | null {
  if (text === '') return null;
  const digits = text.replace(/[,\s\u00a0\u202f]/g, '');
  return /^\d{1,10}$/.test(digits) ? Number(digits) : Number.NaN;
}

export function parseLimitRequest(body: unknown, current: { daily: number; monthly: number }): ParsedLimitRequest {
  const b = (body ?? {}) as Record<string, unknown>;
  const daily = readLimit(field(b.daily));
  const monthly = readLimit(field(b.monthly));
  const reason = field(b.reason);
  if (daily === null && monthly === null) {
    return { ok: false, field: 'daily', message: 'Enter the daily limit you need, the monthly limit you need, or both.' };
  }
  for (const [name, value, now] of [['daily', daily, current.daily], ['monthly', monthly, current.monthly]] as const) {
    if (value === null) continue;
    if (Number.isNaN(value) || value < 1 || value > LIMIT_REQUEST_MAX) {
      return { ok: false, field: name, message: `Write the ${name} limit as a whole number, e.g. ${count(now * 2)}.` };
    }
    if (value <= now) return { ok: false, field: name, message: `Your ${name} limit is already ${count(now)}: ask for more than that, or leave the field empty.` };
  }
  const monthlyAfter = monthly ?? current.monthly;
  if (daily !== null && daily > monthlyAfter) {
    return { ok: false, field: monthly === null ? 'monthly' : 'daily', message: `A daily limit of ${count(daily)} is more than the monthly limit of ${count(monthlyAfter)}: ask for a monthly limit of at least ${count(daily)} too.` };
  }
  if (reason === '') {
    return { ok: false, field: 'reason', message: 'Tell us what you send and why you need more, e.g. “appointment reminders for three new clinics, about 900 a day”.' };
  }
  const problem = textProblem(reason, LIMIT_REQUEST_TEXT_MAX);
  if (problem) return { ok: false, field: 'reason', message: `The reason ${problem}.` };
  return { ok: true, daily, monthly, reason };
}
