import { civilFromDays } from './iso-time.ts';

const DAY_MS = 86_400_000;

/** The calendar day and month a send counts in, for a quota calendar offset from UTC. */
export interface QuotaWindows {
  day: string;
  dayResetsAt: number;
  month: string;
  monthResetsAt: number;
}

const pad = (n: number): string => String(n).padStart(2, '0');

/**
 * Pure calendar arithmetic on the given instant (Date is only used as a UTC calculator here, never
 * to read the clock). With offset 0 the windows are the UTC calendar day and month; with +330 they
 * are India's, and so on. The reset instants are returned as real (UTC) epoch ms.
 */
export function quotaWindows(at: number, offsetMinutes: number): QuotaWindows {
  const shift = offsetMinutes * 60_000;
  const { year, month, date } = utcDate(at + shift);
  return {
    day: `${year}-${pad(month + 1)}-${pad(date)}`,
    dayResetsAt: Date.UTC(year, month, date) + DAY_MS - shift,
    month: `${year}-${pad(month + 1)}`,
    monthResetsAt: Date.UTC(year, month + 1, 1) - shift,
  };
}

/**
 * Date's getUTCFullYear, getUTCMonth and getUTCDate of an instant. Every decision asks it, so a
 * whole millisecond within Date's range is computed without a Date (issue 29); anything else
 * (which no valid command has) goes through Date itself, so its answers stay Date's.
 */
function utcDate(instant: number): { year: number; month: number; date: number } {
  if (Number.isInteger(instant) && Math.abs(instant) <= 8.64e15) {
    const { year, month, day } = civilFromDays(Math.floor(instant / DAY_MS));
    return { year, month: month - 1, date: day };
  }
  const local = new Date(instant);
  return { year: local.getUTCFullYear(), month: local.getUTCMonth(), date: local.getUTCDate() };
}
