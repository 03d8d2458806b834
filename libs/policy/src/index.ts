export { decide, PolicyInputError, type DecideResult } from './decide.ts';
export { evolve } from './evolve.ts';
export { canonicalLinkedId, isLinkedId, recipientKey } from './linked-ids.ts';
export { react, handle, handleCommand } from './react.ts';
export { createPolicy, PolicyConfigError, type Policy } from './policy.ts';
export { policyForVersion, knownPolicyVersions } from './policy-versions.ts';
export {
  guardSummary,
  isFirstContact,
  firstContactAllowance,
  DEFAULT_GUARD_CONFIG,
  GUARD_RETENTION,
  NETWORK_RESTRICTION,
  RESTRICTION_SIGNALS,
  type GuardSummary,
  type GuardConfig,
  type InstanceGuard,
  type FirstContactLimits,
  type FirstContactCaps,
  type FirstContactAllowance,
  type WarmUpStep,
  type RestrictionConfig,
} from './guard/index.ts';
export { replay, run, type PolicyInput, type RunResult } from './replay.ts';
export { initialPolicyState, upgradeState, STATE_VERSION, type CustomerPolicyState, type QualityBucket, type IdentityLinks, type SuppressionEntry } from './state.ts';
export type { SendMemory, RememberedSend } from './time/send-memory.ts';
export { bucketOf, qualityOf, guardOf, instanceOf, instanceEntries, instancesFrom, type InstanceState, type Instances } from './instances.ts';
export { RULES } from './rules/index.ts';
export { evaluateRules } from './evaluate-rules.ts';
export { describeRules, type RuleDescription } from './describe-rules.ts';
export { messageDigest } from './digest.ts';
export { effectivePlan, type EffectivePlan } from './limits.ts';
export { quotaWindows, type QuotaWindows } from './time/quota-windows.ts';
export { bucketAt, type BucketLevel } from './time/token-bucket.ts';
export { qualitySignals } from './quality/auto-pause.ts';
export { DEFAULT_POLICY_CONFIG, RETENTION, policyVersionOf, validatePolicyConfig, type PolicyConfig, type AutoPauseConfig } from './config/policy-config.ts';
export { PLANS, type PlanConfig, type VelocityLimits, type BulkLimits } from './config/plans.ts';
export { CONTENT_RULES, type ContentRules, type ContentCategory, type ContentPattern } from './config/content-rules.ts';
export { URL_SHORTENERS } from './config/url-shorteners.ts';
export type * from './events.ts';
export type { SendCommand, Rule, RuleContext, RuleVerdict, RuleRecord, PolicyDecision } from './types.ts';

import { DEFAULT_POLICY_CONFIG, policyVersionOf } from './config/policy-config.ts';

/** Recorded with every decision of the default policy; changes whenever the default config or content rules change. */
export const POLICY_VERSION: string = policyVersionOf(DEFAULT_POLICY_CONFIG);
