import type { FirstContactCaps, FirstContactLimits } from './config.ts';

const DAY = 86_400_000;

/** The first-contact caps in force for an instance at one moment, and when they next change. */
export interface FirstContactAllowance extends FirstContactCaps {
  /** 'warm_up' while the instance is within its warm-up, else 'plan' (the plan's normal caps). */
  schedule: 'warm_up' | 'plan';
  /** Whole days since first connected (0 on its first day); null when never reported. */
  ageDays: number | null;
  /** When the warm-up moves to its next step (or ends), and the caps from then; null after the warm-up. */
  next: { at: number; caps: FirstContactCaps } | null;
}

/**
 * The caps of an instance first connected at `firstConnectedAt`, at `at`. Without a first-connected
 * time the instance counts as established and gets the plan's caps: instances paired before the
 * guard existed never reported one, and warming up a number that has sent for months would only
 * throttle a customer the network already trusts. Each warm-up step is capped by the plan's caps.
 */
export function firstContactAllowance(limits: FirstContactLimits, firstConnectedAt: number | null, at: number): FirstContactAllowance {
  if (firstConnectedAt === null) return { perHour: limits.perHour, perDay: limits.perDay, schedule: 'plan', ageDays: null, next: null };
  const ageDays = Math.max(0, Math.floor((at - firstConnectedAt) / DAY));
  const { steps, untilDay } = limits.warmUp;
  let index = steps.length - 1;
  while (index >= 0 && steps[index]!.fromDay > ageDays) index -= 1;
  if (index < 0 || ageDays >= untilDay) return { perHour: limits.perHour, perDay: limits.perDay, schedule: 'plan', ageDays, next: null };
  const plan: FirstContactCaps = { perHour: limits.perHour, perDay: limits.perDay };
  const following = steps[index + 1];
  const capped = (caps: FirstContactCaps): FirstContactCaps => ({ perHour: Math.min(caps.perHour, plan.perHour), perDay: Math.min(caps.perDay, plan.perDay) });
  return {
    ...capped(steps[index]!),
    schedule: 'warm_up',
    ageDays,
    next: { at: firstConnectedAt + (following?.fromDay ?? untilDay) * DAY, caps: following ? capped(following) : plan },
  };
}
