/**
 * The three fair-use plans (spec 8: priced 5, 12 and 30 USD per 30 days; names and quotas are ours).
 * This is data: docs/plans.md mirrors it, and a change here is a policy change (bump the config version).
 */

/** Token bucket per instance plus the per-recipient spacing the chat network itself enforces. */
export interface VelocityLimits {
  /** Bucket capacity: how many sends an idle instance may burst. */
  burst: number;
  /** Tokens added back per minute (the sustained rate). */
  refillPerMinute: number;
  /** Minimum gap between two accepted sends from one instance to one recipient. */
  recipientMinIntervalMs: number;
}

/** The same normalised body to more than `maxDistinctRecipients` within `windowMs` is a campaign. */
export interface BulkLimits {
  maxDistinctRecipients: number;
  windowMs: number;
}

export interface PlanConfig {
  id: string;
  name: string;
  priceUsd: number;
  periodDays: number;
  dailyLimit: number;
  monthlyLimit: number;
  velocity: VelocityLimits;
  bulk: BulkLimits;
  /** Per-category content thresholds; missing categories use the content rules' default. */
  contentThresholds?: Readonly<Record<string, number>>;
  /** Quota window offset from UTC in minutes; missing uses the config default (0 = UTC calendar). */
  quotaWindowOffsetMinutes?: number;
}

const HOUR = 3_600_000;

export const PLANS: Readonly<Record<string, PlanConfig>> = {
  starter: {
    id: 'starter',
    name: 'Starter',
    priceUsd: 5,
    periodDays: 30,
    dailyLimit: 100,
    monthlyLimit: 1_000,
    velocity: { burst: 10, refillPerMinute: 10, recipientMinIntervalMs: 6_000 },
    bulk: { maxDistinctRecipients: 20, windowMs: HOUR },
  },
  growth: {
    id: 'growth',
    name: 'Growth',
    priceUsd: 12,
    periodDays: 30,
    dailyLimit: 500,
    monthlyLimit: 5_000,
    velocity: { burst: 30, refillPerMinute: 30, recipientMinIntervalMs: 6_000 },
    bulk: { maxDistinctRecipients: 50, windowMs: HOUR },
  },
  scale: {
    id: 'scale',
    name: 'Scale',
    priceUsd: 30,
    periodDays: 30,
    dailyLimit: 2_000,
    monthlyLimit: 20_000,
    velocity: { burst: 60, refillPerMinute: 60, recipientMinIntervalMs: 6_000 },
    bulk: { maxDistinctRecipients: 100, windowMs: HOUR },
  },
};
