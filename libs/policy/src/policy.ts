import { DEFAULT_POLICY_CONFIG, policyVersionOf, validatePolicyConfig, type PolicyConfig } from './config/policy-config.ts';
import { compileContent, type CompiledContent } from './content/score-content.ts';
import { RULES } from './rules/index.ts';
import type { Rule } from './types.ts';

/**
 * Everything the decider decides with, made once by its owner (the policy consumer, the
 * compliance replay, a test) and passed to every call: the configuration, checked; the rules in
 * their order; the content rules compiled. Nothing of it changes after it is made.
 */
export interface Policy {
  readonly config: PolicyConfig;
  readonly rules: readonly Rule[];
  readonly content: CompiledContent;
  /** Recorded with every decision: the config version plus the content rules' version. */
  readonly version: string;
}

/** A configuration that cannot be decided with; `problems` says every reason. */
export class PolicyConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`the policy configuration is not usable: ${problems.join('; ')}`);
    this.name = 'PolicyConfigError';
  }
}

/** Checks the configuration (throws PolicyConfigError naming every problem) and compiles its content rules. */
export function createPolicy(config: PolicyConfig = DEFAULT_POLICY_CONFIG, rules: readonly Rule[] = RULES): Policy {
  const problems = validatePolicyConfig(config);
  if (problems.length > 0) throw new PolicyConfigError(problems);
  return Object.freeze({ config, rules, content: compileContent(config.content), version: policyVersionOf(config) });
}
