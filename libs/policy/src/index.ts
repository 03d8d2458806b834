export { decide, RULES, POLICY_VERSION, initialPolicyState } from './decider.ts';
export type { SendCommand, PolicyState, Rule, RuleVerdict, RuleRecord, PolicyDecision } from './types.ts';
