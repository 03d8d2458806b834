import type { ErrorCode } from '@gw/contract';
import type { RuleVerdict } from '../types.ts';

export const pass = (rule: string, details?: Record<string, unknown>): RuleVerdict =>
  details ? { rule, outcome: 'pass', details } : { rule, outcome: 'pass' };

export const fail = (rule: string, code: ErrorCode, message: string, details: Record<string, unknown>): RuleVerdict => ({
  rule,
  outcome: 'fail',
  code,
  message,
  details,
});
