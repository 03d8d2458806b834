import type { PolicyConfig } from './config/policy-config.ts';
import type { BulkLimits, PlanConfig, VelocityLimits } from './config/plans.ts';
import type { CustomerPolicyState } from './state.ts';

/** The limits that apply to a customer right now: the plan's, with a manual override on top. */
export interface EffectivePlan {
  plan: PlanConfig;
  dailyLimit: number;
  monthlyLimit: number;
  velocity: VelocityLimits;
  bulk: BulkLimits;
  quotaWindowOffsetMinutes: number;
  /** Who granted the override in force, for the rule details; null without one. */
  overriddenBy: string | null;
}

/** The customer's plan with its override applied; null without a known plan. */
export function effectivePlan(state: CustomerPolicyState, config: PolicyConfig): EffectivePlan | null {
  const plan = state.plan.planId === null ? undefined : config.plans[state.plan.planId];
  if (!plan) return null;
  const override = state.override;
  return {
    plan,
    dailyLimit: override?.daily ?? plan.dailyLimit,
    monthlyLimit: override?.monthly ?? plan.monthlyLimit,
    velocity: withDefined(plan.velocity, override?.velocity),
    bulk: withDefined(plan.bulk, override?.bulk),
    quotaWindowOffsetMinutes: plan.quotaWindowOffsetMinutes ?? config.quotaWindowOffsetMinutes,
    overriddenBy: override ? override.grantedBy : null,
  };
}

/**
 * The plan's limits with an override's defined members on top (a partial override does not blank
 * out the plan's values). A plain loop: this runs on every decision, and entries/fromEntries
 * built three arrays per call (issue 29).
 */
function withDefined<T extends object>(base: T, override: Partial<T> | undefined): T {
  if (!override) return base;
  const merged = { ...base };
  for (const key in override) if (override[key] !== undefined) merged[key] = override[key]!;
  return merged;
}
