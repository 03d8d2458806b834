import { effectivePlan } from '../limits.ts';
import type { Policy } from '../policy.ts';
import type { CustomerPolicyState } from '../state.ts';
import { firstContactAllowance } from './allowance.ts';
import type { RestrictionSignal } from './events.ts';
import { emptyInstanceGuard } from './state.ts';
import { countWithin } from './windows.ts';
import { guardOf } from '../instances.ts';

const DAY = 86_400_000;

/** The guard of one instance at `at`, in figures (the usage page, the projection, gatewayctl). */
export interface GuardSummary {
  firstConnectedAt: number | null;
  /** Whole days since first connected; null when never reported (counted as established). */
  ageDays: number | null;
  /** The warm-up's allowance of first contacts per 24 h; null when no warm-up applies (established, or no plan). */
  warmUpAllowanceToday: number | null;
  /** The cap of first contacts per 24 h in force (warm-up or the plan's); null without a plan. */
  firstContactLimitToday: number | null;
  /** First contacts in the last 24 h ("today" is the rolling day the caps count over). */
  firstContactsToday: number;
  /** What is left of firstContactLimitToday; null without a plan. */
  firstContactsLeftToday: number | null;
  /** End of the restriction in force; null when none. */
  restrictedUntil: number | null;
  restrictionSignal: RestrictionSignal | null;
  /** Restriction signals within the configured window. */
  signals: number;
}

/** Pure: the same state, instance, time and policy give the same summary. */
export function guardSummary(state: CustomerPolicyState, instanceId: string, at: number, policy: Policy): GuardSummary {
  const guard = guardOf(state.instances, instanceId) ?? emptyInstanceGuard();
  const plan = effectivePlan(state, policy.config);
  const limits = plan ? policy.config.guard.firstContacts[plan.plan.id] : undefined;
  const allowance = limits ? firstContactAllowance(limits, guard.firstConnectedAt, at) : null;
  const firstContactsToday = countWithin(guard.firstContacts, at, DAY);
  const restriction = guard.restriction && guard.restriction.until > at ? guard.restriction : null;
  return {
    firstConnectedAt: guard.firstConnectedAt,
    ageDays: guard.firstConnectedAt === null ? null : Math.max(0, Math.floor((at - guard.firstConnectedAt) / DAY)),
    warmUpAllowanceToday: allowance?.schedule === 'warm_up' ? allowance.perDay : null,
    firstContactLimitToday: allowance?.perDay ?? null,
    firstContactsToday,
    firstContactsLeftToday: allowance ? Math.max(0, allowance.perDay - firstContactsToday) : null,
    restrictedUntil: restriction?.until ?? null,
    restrictionSignal: restriction?.signal ?? null,
    signals: countWithin(guard.signals, at, policy.config.guard.restriction.signalWindowMs),
  };
}
