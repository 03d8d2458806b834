import type { PolicyConfig } from '../config/policy-config.ts';
import type { InstancePausedForReview, PolicyEvent } from '../events.ts';
import type { CustomerPolicyState } from '../state.ts';
import { isReadableSignal } from './evolve-guard.ts';
import type { InstanceRestricted, RestrictionSignalled } from './events.ts';
import { countWithin } from './windows.ts';
import { guardOf } from '../instances.ts';

/** The reason of the pause the guard emits, for a ban or for repeated signals. */
export const NETWORK_RESTRICTION = 'network_restriction';

/**
 * What a restriction signal makes the engine do (`state` already holds the signal): restrict the
 * instance at once, until the end time the network gave, else for the back-off of the signals
 * counted in the window (1st, 2nd, 3rd and later); a restriction in force is never shortened.
 * A ban, or the configured number of signals in the window, also pauses it for review (423), once.
 */
export function reactToRestriction(event: RestrictionSignalled, state: CustomerPolicyState, config: PolicyConfig): PolicyEvent[] {
  const guard = guardOf(state.instances, event.instanceId);
  if (!guard || !isReadableSignal(event)) return [];
  const { backoffMs, signalWindowMs, pauseAfterSignals } = config.guard.restriction;
  const signals = countWithin(guard.signals, event.at, signalWindowMs);
  const backoff = backoffMs[Math.min(Math.max(signals, 1), backoffMs.length) - 1]!;
  const given = typeof event.until === 'number' ? event.until : null;
  const current = guard.restriction && guard.restriction.until > event.at ? guard.restriction.until : -Infinity;
  const restricted: InstanceRestricted = {
    type: 'InstanceRestricted',
    customerId: state.customerId,
    at: event.at,
    instanceId: event.instanceId,
    signal: event.signal,
    until: Math.max(given ?? event.at + backoff, current),
    signals,
  };
  const pause = !state.paused[event.instanceId] && (event.signal === 'banned' || signals >= pauseAfterSignals);
  if (!pause) return [restricted];
  const paused: InstancePausedForReview = { type: 'InstancePausedForReview', customerId: state.customerId, at: event.at, instanceId: event.instanceId, reason: NETWORK_RESTRICTION, by: 'auto' };
  return [restricted, paused];
}
