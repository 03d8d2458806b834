// How the pages write numbers, shares and times: one definition each, for every slice and chart.

/** A number as the pages write counts: 1,234. */
export const count = (n: number): string => n.toLocaleString('en-US');

/** A ratio as a percentage with at most two decimals: 0.0125 → "1.25 %". */
export const percent = (ratio: number): string => `${Number((ratio * 100).toFixed(2))} %`;

/** The quota calendar in words: "UTC", "UTC+05:30". */
export function calendarName(offsetMinutes: number): string {
  if (offsetMinutes === 0) return 'UTC';
  const abs = Math.abs(offsetMinutes);
  return `UTC${offsetMinutes < 0 ? '-' : '+'}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
}

/** A time in UTC, to the second ("2026-01-31 12:00:05 UTC") or to the minute ("2026-01-31 12:00 UTC"). */
function utc(at: number | Date, to: 'second' | 'minute'): string {
  const iso = new Date(at).toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11, to === 'second' ? 19 : 16)} UTC`;
}

/** A time as the logs show it: "2026-01-31 12:00:05 UTC" ('' for none). */
export const utcText = (time: Date | null | undefined): string => (time ? utc(time, 'second') : '');

/** A time as the usage page shows it: "2026-01-31 12:00 UTC". */
export const utcMinute = (at: number | Date): string => utc(at, 'minute');

/** An end time as the notices say it: "14:05 UTC" when it is on the same UTC day as `now`, else with its date. */
export const utcUntil = (at: number | Date, now: number): string => {
  const minute = utcMinute(at);
  return minute.slice(0, 10) === new Date(now).toISOString().slice(0, 10) ? minute.slice(11) : minute;
};
