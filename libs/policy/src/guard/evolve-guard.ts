import type { PolicyEvent, SendDecided } from '../events.ts';
import { copyState, type CustomerPolicyState } from '../state.ts';
import { GUARD_RETENTION } from './config.ts';
import { knowsNoneOf, learnedContactKey, sendContactKey, withContact } from './contacts.ts';
import { RECORDED_ONLY_SIGNALS, RESTRICTION_SIGNALS, type RestrictionSignalled } from './events.ts';
import { guardOf, updateInstance } from '../instances.ts';
import { emptyInstanceGuard, type InstanceGuard } from './state.ts';
import { insertTime, keepAfter } from './windows.ts';

/**
 * The guard's part of evolve: folds `event` into `state.guard`. Called by evolve on the state that
 * already holds the rest of the event (the clock moved on), for the same customer. Like the rest
 * of evolve it needs no config. A fact from the ingest that names no instance, or no valid
 * contact, time or signal, changes nothing: it is in the log already and cannot be refused.
 */
export function evolveGuard(state: CustomerPolicyState, event: PolicyEvent): CustomerPolicyState {
  switch (event.type) {
    case 'SendDecided':
      return event.decision === 'accepted' ? rememberSend(state, event) : state;
    case 'InstanceConnected':
      if (!validInstance(event.instanceId) || !Number.isFinite(event.firstConnectedAt)) return state;
      return update(state, event.instanceId, (guard) =>
        guard.firstConnectedAt !== null && guard.firstConnectedAt <= event.firstConnectedAt ? guard : { ...guard, firstConnectedAt: event.firstConnectedAt },
      );
    case 'ContactLearned': {
      const key = typeof event.contact === 'string' ? learnedContactKey(event.contact) : null;
      if (!validInstance(event.instanceId) || key === null) return state;
      return update(state, event.instanceId, (guard) => withContact(guard, key));
    }
    case 'RestrictionSignalled':
      if (!isReadableSignal(event)) return state;
      return update(state, event.instanceId, (guard) => ({
        ...guard,
        signals: keepAfter(insertTime(guard.signals, event.at), state.clock - GUARD_RETENTION.signalsMs, GUARD_RETENTION.maxSignals),
      }));
    case 'InstanceRestricted':
      return update(state, event.instanceId, (guard) => ({ ...guard, restriction: { signal: event.signal, at: event.at, until: event.until } }));
    case 'RestrictionLifted':
    case 'InstanceResumed':
      // A review lifts the restriction and starts the count afresh, so old signals cannot re-pause at once.
      if (!guardOf(state.instances, event.instanceId)) return state;
      return update(state, event.instanceId, (guard) => ({ ...guard, restriction: null, signals: [] }));
    default:
      return state;
  }
}

/**
 * A signal the guard can act on (react restricts only on these; evolve counts only these): it
 * names an instance and a known signal that is not recorded-only, and its end time, if any, is a time a Date can hold (it is written as ISO in details and webhooks).
 */
export function isReadableSignal(event: RestrictionSignalled): boolean {
  return (
    validInstance(event.instanceId) &&
    (RESTRICTION_SIGNALS as readonly string[]).includes(event.signal) &&
    !RECORDED_ONLY_SIGNALS.includes(event.signal) &&
    (event.until === null || event.until === undefined || (Number.isFinite(event.until) && Math.abs(event.until) <= 8.64e15))
  );
}

/** An accepted send makes its recipient a contact; to a first contact it also counts in the rolling day. */
function rememberSend(state: CustomerPolicyState, event: SendDecided): CustomerPolicyState {
  return update(state, event.instanceId, (guard) => {
    // The guard at hand, not a second lookup (an empty guard knows nobody, as a missing one).
    const first = knowsNoneOf(state, guard, event.recipient);
    const known = withContact(guard, sendContactKey(event.recipient));
    if (!first) return known;
    return { ...known, firstContacts: keepAfter(insertTime(known.firstContacts, event.at), state.clock - GUARD_RETENTION.firstContactsMs) };
  });
}

const validInstance = (instanceId: unknown): instanceId is string => typeof instanceId === 'string' && instanceId !== '';

function update(state: CustomerPolicyState, instanceId: string, change: (guard: InstanceGuard) => InstanceGuard): CustomerPolicyState {
  const instances = updateInstance(state.instances, instanceId, (instance) => {
    const current = instance.guard ?? emptyInstanceGuard();
    const next = change(current);
    return next === current && instance.guard !== null ? instance : { ...instance, guard: next };
  });
  if (instances === state.instances) return state;
  const changed = copyState(state);
  changed.instances = instances;
  return changed;
}
