import { DEFAULT_POLICY_CONFIG, policyVersionOf, type PolicyConfig } from './config/policy-config.ts';
import { firstContactLimit, instanceNotRestricted } from './guard/rules.ts';
import { createPolicy, type Policy } from './policy.ts';
import { RULES } from './rules/index.ts';
import type { Rule } from './types.ts';

/** A policy the log may name: its configuration and its rules, in their order. */
interface PolicyRelease {
  config: PolicyConfig;
  rules: readonly Rule[];
}

const GUARD_RULES = new Set([instanceNotRestricted.name, firstContactLimit.name]);

/**
 * Every policy decisions were made with, newest first. Each older entry is written as what it
 * undoes of its successor, so when a release changes something, the entry before it must undo
 * that change too (and if content rules change, keep the old ones under their own name here).
 */
const RELEASES: readonly (() => PolicyRelease)[] = [
  () => ({ config: DEFAULT_POLICY_CONFIG, rules: RULES }),
  // 2026-11-22.2: before the number guard: no guard rules, 3 s between sends to one recipient.
  () => ({
    config: {
      ...DEFAULT_POLICY_CONFIG,
      version: '2026-11-22.2',
      plans: Object.fromEntries(Object.entries(DEFAULT_POLICY_CONFIG.plans).map(([id, plan]) => [id, { ...plan, velocity: { ...plan.velocity, recipientMinIntervalMs: 3_000 } }])),
    },
    rules: RULES.filter((rule) => !GUARD_RULES.has(rule.name)),
  }),
];

/**
 * The policy of `version` (a SendDecided's policyVersion, `<config version>+<content version>`),
 * made anew on every call: a compliance replay of a log decided under an older version decides
 * with that version's config and rules. null for a version this code does not know. The state's
 * fold (evolve) is the same for every version; the consumer keeps deciding with the current one.
 */
export function policyForVersion(version: string): Policy | null {
  for (const release of RELEASES) {
    const { config, rules } = release();
    if (policyVersionOf(config) === version) return createPolicy(config, rules);
  }
  return null;
}

/** The versions policyForVersion knows, newest first (for messages and the CLI). */
export const knownPolicyVersions = (): string[] => RELEASES.map((release) => policyVersionOf(release().config));
