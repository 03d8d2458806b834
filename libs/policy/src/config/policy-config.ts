import { DEFAULT_GUARD_CONFIG, validateGuardConfig, type GuardConfig } from '../guard/config.ts';
import { CONTENT_RULES, type ContentRules } from './content-rules.ts';
import { PLANS, type PlanConfig } from './plans.ts';
import { URL_SHORTENERS } from './url-shorteners.ts';

/**
 * Thresholds of the automatic pause for review. Each signal is a rate over the instance's last
 * `windowHours` of activity and only counts once its volume reaches the minimum, so one bad
 * message from a quiet instance cannot pause it.
 */
export interface AutoPauseConfig {
  windowHours: number;
  /** policy_violation refusals / messages whose content was judged (accepted + policy_violation). */
  violationRate: { threshold: number; minVolume: number };
  /** opt-outs received on the instance / accepted sends. */
  optOutRate: { threshold: number; minVolume: number };
  /** failed deliveries / delivery outcomes. */
  deliveryFailureRate: { threshold: number; minVolume: number };
}

export interface PolicyConfig {
  /** Bump on any change of rules, order or thresholds; part of POLICY_VERSION. */
  version: string;
  /** Modules of a customer before any ModuleToggled. */
  defaultModules: { api: boolean; pbx: boolean };
  plans: Readonly<Record<string, PlanConfig>>;
  /** Offset from UTC (minutes) of the daily/monthly quota calendar; a plan may override it. */
  quotaWindowOffsetMinutes: number;
  content: ContentRules;
  urlShorteners: readonly string[];
  autoPause: AutoPauseConfig;
  /** The number guard: first-contact caps and warm-up per plan, the restriction back-off (guard/config.ts). */
  guard: GuardConfig;
}

/**
 * How long evolve remembers each kind of window. These are structural bounds of the state (so it
 * can be snapshotted), not policy: configured windows must fit inside them (validatePolicyConfig).
 */
export const RETENTION = {
  /** Accepted sends are remembered this long (bulk windows and recipient intervals must fit). */
  bulkMs: 24 * 3_600_000,
  recipientIntervalMs: 10 * 60_000,
  qualityHours: 24,
  /** An idle bucket is dropped after this long; a missing bucket counts as full. */
  idleBucketMs: 24 * 3_600_000,
} as const;

export const DEFAULT_POLICY_CONFIG: PolicyConfig = {
  // 2026-11-27.1: the number guard (two rules, state.guard) and 6 s between sends to one recipient.
  // Logs decided under an older version replay with policyForVersion (policy-versions.ts).
  version: '2026-11-27.1',
  defaultModules: { api: true, pbx: false },
  plans: PLANS,
  quotaWindowOffsetMinutes: 0,
  content: CONTENT_RULES,
  urlShorteners: URL_SHORTENERS,
  autoPause: {
    windowHours: 24,
    violationRate: { threshold: 0.2, minVolume: 20 },
    optOutRate: { threshold: 0.05, minVolume: 40 },
    deliveryFailureRate: { threshold: 0.3, minVolume: 20 },
  },
  guard: DEFAULT_GUARD_CONFIG,
};

/** The version string recorded with every decision: config version plus content-rules version. */
export function policyVersionOf(config: PolicyConfig): string {
  return `${config.version}+${config.content.version}`;
}

/** Returns the problems of a config (empty when usable); the windows must fit the retention. */
export function validatePolicyConfig(config: PolicyConfig): string[] {
  const problems: string[] = [];
  if (config.autoPause.windowHours < 1 || config.autoPause.windowHours > RETENTION.qualityHours) {
    problems.push(`autoPause.windowHours must be within 1..${RETENTION.qualityHours}`);
  }
  for (const plan of Object.values(config.plans)) {
    if (plan.bulk.windowMs > RETENTION.bulkMs) problems.push(`${plan.id}: bulk.windowMs exceeds ${RETENTION.bulkMs}`);
    if (plan.bulk.maxDistinctRecipients < 1) problems.push(`${plan.id}: bulk.maxDistinctRecipients must be at least 1`);
    if (plan.velocity.recipientMinIntervalMs > RETENTION.recipientIntervalMs) problems.push(`${plan.id}: recipientMinIntervalMs exceeds ${RETENTION.recipientIntervalMs}`);
    if (plan.velocity.burst < 1 || plan.velocity.refillPerMinute <= 0) problems.push(`${plan.id}: velocity must allow sending`);
    if (plan.dailyLimit > plan.monthlyLimit) problems.push(`${plan.id}: dailyLimit exceeds monthlyLimit`);
  }
  problems.push(...validateGuardConfig(config.guard, Object.keys(config.plans)));
  return problems;
}
