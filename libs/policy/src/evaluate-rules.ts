import type { PolicyDecision, Rule, RuleContext, RuleRecord } from './types.ts';

/**
 * Runs the rules in order; the first failure decides and every later rule is recorded as skipped,
 * so the policy log shows exactly what was evaluated and why.
 */
export function evaluateRules(rules: readonly Rule[], context: RuleContext): PolicyDecision {
  const records: RuleRecord[] = [];
  for (let index = 0; index < rules.length; index++) {
    const rule = rules[index]!;
    const verdict = rule.check(context);
    records.push({ rule: verdict.rule, outcome: verdict.outcome, details: verdict.details ?? null });
    if (verdict.outcome === 'fail') {
      for (const skipped of rules.slice(index + 1)) records.push({ rule: skipped.name, outcome: 'skipped', details: null });
      return {
        decision: 'rejected',
        code: verdict.code ?? rule.code,
        message: verdict.message ?? 'The message was refused by the responsible-messaging policy.',
        details: { rule: verdict.rule, ...verdict.details },
        rules: records,
      };
    }
  }
  return { decision: 'accepted', rules: records };
}
