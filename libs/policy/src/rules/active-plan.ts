import type { Rule } from '../types.ts';
import { fail, pass } from './verdict.ts';
import { isoTime } from '../time/iso-time.ts';

const name = 'active_plan';
const message = 'An active plan is required to send messages.';

/** A known plan whose paid period has not ended at the command's time. */
export const activePlan: Rule = {
  name,
  code: 'active_plan_required',
  summary: 'A known plan is set and the command time is before its validUntil.',
  check: ({ command, state, plan }) => {
    const { planId, validUntil } = state.plan;
    if (planId === null) return fail(name, 'active_plan_required', message, { reason: 'no_plan' });
    if (!plan) return fail(name, 'active_plan_required', message, { reason: 'unknown_plan', plan: planId });
    if (validUntil === null || command.occurredAt >= validUntil) {
      return fail(name, 'active_plan_required', message, { reason: 'plan_expired', plan: planId, valid_until: validUntil === null ? null : isoTime(validUntil) });
    }
    return pass(name, { plan: planId, valid_until: isoTime(validUntil) });
  },
};
