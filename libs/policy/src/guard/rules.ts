import { fail, pass } from '../rules/verdict.ts';
import type { Rule } from '../types.ts';
import { firstContactAllowance, type FirstContactAllowance } from './allowance.ts';
import { knowsNoneOf } from './contacts.ts';
import { countWithin, windowOf } from './windows.ts';
import { isoTime } from '../time/iso-time.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

const restrictedName = 'instance_not_restricted';

/**
 * While the chat network's warning holds (InstanceRestricted, until its end, a lift or a resume),
 * the instance sends nothing to first contacts; replies to people it knows still go.
 */
export const instanceNotRestricted: Rule = {
  name: restrictedName,
  code: 'sending_throttled',
  summary: 'The instance is not under a restriction signalled by the chat network, or the recipient is not a first contact.',
  check: ({ command, state, config, instance }) => {
    const guard = instance?.guard ?? undefined;
    const restriction = guard?.restriction;
    if (!guard || !restriction || restriction.until <= command.occurredAt) return pass(restrictedName);
    const details = {
      restriction_signal: restriction.signal,
      restricted_at: isoTime(restriction.at),
      restricted_until: isoTime(restriction.until),
      signals: countWithin(guard.signals, command.occurredAt, config.guard.restriction.signalWindowMs),
    };
    if (!knowsNoneOf(state, guard, command.recipient)) return pass(restrictedName, { first_contact: false, ...details });
    return fail(restrictedName, 'sending_throttled', 'The chat network restricted this instance: messages to new contacts wait until the restriction ends; replies still go.', {
      control: 'instance_restricted',
      retry_after_ms: restriction.until - command.occurredAt,
      first_contact: true,
      ...details,
    });
  },
};

const limitName = 'first_contact_limit';

/**
 * First contacts per rolling hour and rolling 24 h per instance: the warm-up step of the
 * instance's age while it is new, else the plan's normal caps (config.guard.firstContacts).
 */
export const firstContactLimit: Rule = {
  name: limitName,
  code: 'sending_throttled',
  summary: "First contacts of the instance in the last hour and 24 hours stay below its caps: the warm-up schedule by the instance's age, then the plan's.",
  check: (context) => {
    const { command, state } = context;
    const limits = context.plan ? context.config.guard.firstContacts[context.plan.plan.id] : undefined;
    if (!limits) return pass(limitName);
    const guard = context.instance?.guard ?? undefined;
    if (!knowsNoneOf(state, guard, command.recipient)) return pass(limitName, { first_contact: false });
    const at = command.occurredAt;
    const allowance = firstContactAllowance(limits, guard?.firstConnectedAt ?? null, at);
    const times = guard?.firstContacts ?? [];
    const hourWait = waitFor(times, allowance.perHour, HOUR, at, allowance, 'perHour');
    const dayWait = waitFor(times, allowance.perDay, DAY, at, allowance, 'perDay');
    const details = {
      first_contact: true,
      schedule: allowance.schedule,
      instance_age_days: allowance.ageDays,
      per_hour: allowance.perHour,
      per_day: allowance.perDay,
      first_contacts_last_hour: hourWait.count,
      first_contacts_last_day: dayWait.count,
    };
    if (hourWait.ms === 0 && dayWait.ms === 0) return pass(limitName, details);
    const prefix = allowance.schedule === 'warm_up' ? 'warm_up' : 'first_contacts';
    const controls = [...(hourWait.ms > 0 ? [`${prefix}_per_hour`] : []), ...(dayWait.ms > 0 ? [`${prefix}_per_day`] : [])];
    const message = allowance.schedule === 'warm_up'
      ? 'This instance is new: its allowance of messages to new contacts grows with its age; retry later.'
      : 'This instance reached its limit of messages to new contacts for now; retry later.';
    return fail(limitName, 'sending_throttled', message, { control: controls[0], controls, retry_after_ms: Math.max(hourWait.ms, dayWait.ms), ...details });
  },
};

/**
 * The first contacts in the window ending at `at`, and how long until one more fits (0: now): until
 * enough of them leave it, or sooner when the warm-up's next step raises the cap above the count.
 */
function waitFor(times: readonly number[], cap: number, windowMs: number, at: number, allowance: FirstContactAllowance, which: 'perHour' | 'perDay'): { count: number; ms: number } {
  const { end, count } = windowOf(times, at, windowMs);
  if (count < cap) return { count, ms: 0 };
  const leaves = times[end - cap]! + windowMs - at;
  const raised = allowance.next && allowance.next.caps[which] > count ? allowance.next.at - at : Infinity;
  return { count, ms: Math.max(1, Math.min(leaves, raised)) };
}
