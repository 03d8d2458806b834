import type { ErrorCode } from '@gw/contract';
import type { Rule, RuleContext } from '../types.ts';
import { fail, pass } from './verdict.ts';
import { isoTime } from '../time/iso-time.ts';

/**
 * The calendar window a command counts in: its own, unless the state already moved to a newer one
 * (a late command, e.g. from a slower API node, counts against the newest window, as in evolve).
 */
export function currentWindow(counter: { window: string; used: number }, window: string): { window: string; used: number } {
  return window > counter.window ? { window, used: 0 } : counter;
}

/** Daily and monthly quotas differ only in the window and the limit they read. */
export function quotaRule(period: 'day' | 'month', name: string, code: ErrorCode): Rule {
  const label = period === 'day' ? 'daily' : 'monthly';
  return {
    name,
    code,
    summary: `Accepted sends of the customer in the current calendar ${period} (UTC unless configured) stay below the ${label} limit.`,
    check: ({ state, plan, windows }: RuleContext) => {
      if (!plan) return pass(name);
      const limit = period === 'day' ? plan.dailyLimit : plan.monthlyLimit;
      const { window, used } = currentWindow(state.quota[period], period === 'day' ? windows.day : windows.month);
      const details = {
        limit,
        used,
        window,
        resets_at: isoTime(period === 'day' ? windows.dayResetsAt : windows.monthResetsAt),
        ...(plan.overriddenBy ? { override_granted_by: plan.overriddenBy } : {}),
      };
      return used < limit ? pass(name, details) : fail(name, code, `The ${label} message limit of ${limit} is reached.`, details);
    },
  };
}
