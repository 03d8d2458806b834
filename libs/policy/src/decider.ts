import { purposeAllowed } from './rules/purpose-allowed.ts';
import type { PolicyDecision, PolicyState, Rule, RuleRecord, SendCommand } from './types.ts';

/** Bumped whenever a rule, its order or its thresholds change; recorded on every decision. */
export const POLICY_VERSION = '2026-11-22.1';

/** The rules in their fixed, documented evaluation order (docs/policy.md). */
export const RULES: readonly Rule[] = [purposeAllowed];

export const initialPolicyState = (): PolicyState => ({ version: 0 });

/**
 * Pure: evaluates the rules in order; the first failure decides, and the rules after it are
 * recorded as skipped so the log shows exactly what was evaluated.
 */
export function decide(command: SendCommand, state: PolicyState, rules: readonly Rule[] = RULES): PolicyDecision {
  const records: RuleRecord[] = [];
  for (const [index, rule] of rules.entries()) {
    const verdict = rule(command, state);
    records.push({ rule: verdict.rule, outcome: verdict.outcome, details: verdict.details ?? null });
    if (verdict.outcome === 'fail') {
      for (const skipped of rules.slice(index + 1)) {
        records.push({ rule: skipped(command, state).rule, outcome: 'skipped', details: null });
      }
      return {
        decision: 'rejected',
        code: verdict.code ?? 'policy_violation',
        message: verdict.message ?? 'The message was refused by the responsible-messaging policy.',
        details: { rule: verdict.rule, ...verdict.details },
        rules: records,
      };
    }
  }
  return { decision: 'accepted', rules: records };
}
