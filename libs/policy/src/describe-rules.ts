import { statusOf, type ErrorCode } from '@gw/contract';
import { RULES } from './rules/index.ts';
import type { Rule } from './types.ts';

export interface RuleDescription {
  order: number;
  name: string;
  code: ErrorCode;
  status: number;
  summary: string;
}

/** The rules in evaluation order with the code and HTTP status each refuses with (docs, CLI). */
export function describeRules(rules: readonly Rule[] = RULES): RuleDescription[] {
  return rules.map((rule, index) => ({ order: index + 1, name: rule.name, code: rule.code, status: statusOf(rule.code), summary: rule.summary }));
}
