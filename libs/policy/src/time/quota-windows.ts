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
  const local = new Date(at + shift);
  const year = local.getUTCFullYear();
  const month = local.getUTCMonth();
  const date = local.getUTCDate();
  return {
    day: `${year}-${pad(month + 1)}-${pad(date)}`,
    dayResetsAt: Date.UTC(year, month, date) + DAY_MS - shift,
    month: `${year}-${pad(month + 1)}`,
    monthResetsAt: Date.UTC(year, month + 1, 1) - shift,
  };
}
