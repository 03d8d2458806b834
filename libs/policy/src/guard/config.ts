/**
 * The number guard's configuration (docs/policy.md, "Number guard"). Figures are community and
 * vendor ones, not the network's (which publishes none for WhatsApp Web numbers): see the sources
 * cited there. A change here is a policy change: bump PolicyConfig.version.
 */

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** First contacts an instance may make per rolling hour and rolling 24 hours. */
export interface FirstContactCaps {
  perHour: number;
  perDay: number;
}

/** A step of the warm-up: from `fromDay` (days since the instance was first connected, 0-based) until the next step. */
export interface WarmUpStep extends FirstContactCaps {
  fromDay: number;
}

/** One plan's first-contact limits: the normal caps, and the warm-up schedule of a new instance (steps by `fromDay`, ascending). */
export interface FirstContactLimits extends FirstContactCaps {
  /** After the last step ends (`untilDay`) the normal caps apply; each step is capped by them too. */
  warmUp: { steps: WarmUpStep[]; untilDay: number };
}

export interface RestrictionConfig {
  /** Back-off after a signal without an end time, by the number of signals in the window (1st, 2nd, 3rd and later). */
  backoffMs: number[];
  /** Signals are counted over this window (at most GUARD_RETENTION.signalsMs). */
  signalWindowMs: number;
  /** This many signals within the window pause the instance for review (a `banned` signal pauses at once). */
  pauseAfterSignals: number;
}

export interface GuardConfig {
  /** Plan id → its first-contact limits; every plan of config.plans needs an entry (validateGuardConfig). */
  firstContacts: Readonly<Record<string, FirstContactLimits>>;
  restriction: RestrictionConfig;
}

/**
 * How long evolve remembers the guard's windows: structural bounds of the state, not policy
 * (configured windows must fit: validateGuardConfig).
 */
export const GUARD_RETENTION = {
  /** First contacts are counted over at most a rolling day. */
  firstContactsMs: DAY,
  signalsMs: DAY,
  /** At most this many signal times per instance (the newest), whatever arrives. */
  maxSignals: 64,
} as const;

/**
 * Days 0–1: 50 a day and 20 an hour; days 2–4: 200 and 40; days 5–9: 500 and 80; from day 10 the
 * plan's normal caps (the warm-up one tool uses, issue 27; each step is capped by the plan's caps).
 */
const WARM_UP: FirstContactLimits['warmUp'] = {
  steps: [
    { fromDay: 0, perDay: 50, perHour: 20 },
    { fromDay: 2, perDay: 200, perHour: 40 },
    { fromDay: 5, perDay: 500, perHour: 80 },
  ],
  untilDay: 10,
};

/**
 * Normal caps per plan, after the warm-up. Per day they stay under Meta's Cloud API tiers of unique
 * users reached outside a conversation in 24 h (250 → 2,000 → 10k → 100k), as a WhatsApp Web
 * number has no business verification behind it: Starter the first tier (its quota of 100 binds
 * first within a calendar day, but a rolling day spans two), Growth 500, Scale 1,000 (half the
 * second). Per hour they are above the warm-up's last step (80), so the allowance only grows.
 */
export const DEFAULT_GUARD_CONFIG: GuardConfig = {
  firstContacts: {
    starter: { perHour: 100, perDay: 250, warmUp: WARM_UP },
    growth: { perHour: 120, perDay: 500, warmUp: WARM_UP },
    scale: { perHour: 200, perDay: 1_000, warmUp: WARM_UP },
  },
  restriction: {
    backoffMs: [HOUR, 6 * HOUR, DAY],
    signalWindowMs: DAY,
    pauseAfterSignals: 3,
  },
};

/** The problems of a guard configuration for these plans (empty when usable). */
export function validateGuardConfig(guard: GuardConfig, planIds: readonly string[]): string[] {
  const problems: string[] = [];
  for (const planId of planIds) {
    const limits = guard.firstContacts[planId];
    if (!limits) {
      problems.push(`${planId}: guard.firstContacts has no entry`);
      continue;
    }
    const steps = limits.warmUp.steps;
    if ([limits, ...steps].some((caps) => !(caps.perHour >= 1 && caps.perDay >= 1))) problems.push(`${planId}: first-contact caps must allow sending`);
    if (steps.length > 0 && steps[0]!.fromDay !== 0) problems.push(`${planId}: the warm-up must start on day 0`);
    if (steps.some((step, i) => i > 0 && !(step.fromDay > steps[i - 1]!.fromDay))) problems.push(`${planId}: warm-up steps must be in ascending fromDay`);
    if (steps.length > 0 && !(limits.warmUp.untilDay > steps.at(-1)!.fromDay)) problems.push(`${planId}: warm-up untilDay must follow its last step`);
  }
  const { restriction } = guard;
  if (restriction.backoffMs.length === 0 || restriction.backoffMs.some((ms) => !(ms > 0))) problems.push('guard.restriction.backoffMs needs positive durations');
  if (!(restriction.signalWindowMs > 0 && restriction.signalWindowMs <= GUARD_RETENTION.signalsMs)) problems.push(`guard.restriction.signalWindowMs must be within 1..${GUARD_RETENTION.signalsMs}`);
  if (!(restriction.pauseAfterSignals >= 1 && restriction.pauseAfterSignals <= GUARD_RETENTION.maxSignals)) problems.push(`guard.restriction.pauseAfterSignals must be within 1..${GUARD_RETENTION.maxSignals}`);
  return problems;
}
