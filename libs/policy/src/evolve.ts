import { normalizePhone } from '@gw/contract';
import type { PolicyEvent, RecipientIdentityLinked, RecipientSuppressed, SendDecided } from './events.ts';
import { canonicalLinkedId, recipientKey } from './linked-ids.ts';
import { evolveGuard } from './guard/evolve-guard.ts';
import { pruneInstances, updateInstance, type InstanceState } from './instances.ts';
import { countQuality, type QualityCounter } from './quality/quality-buckets.ts';
import { currentWindow } from './rules/quota-rule.ts';
import { copyState, type CustomerPolicyState } from './state.ts';
import { ageSends, rememberSend } from './time/send-memory.ts';

const HOUR_MS = 3_600_000;

/**
 * Pure fold of one event into the customer's state. It needs no config: every figure that
 * depends on configuration was computed by the decider and recorded in the event. Events of
 * another customer are ignored (the state is per customer). Never mutates its input.
 *
 * Why not in place (issue 29 weighed it): the contract lets callers keep a state they evolved
 * from. `run` and `replay` continue from a snapshot the caller still holds (and may continue from
 * again); the replay specs fold one history several ways and check the input is untouched. The
 * policy consumer alone would tolerate it (it drops its partition's states when a write fails),
 * which is not enough. The large parts of the state are persistent instead
 * (structures/hash-trie.ts): a fold copies the few small nodes it changes, never a whole window.
 */
export function evolve(state: CustomerPolicyState, event: PolicyEvent): CustomerPolicyState {
  if (event.customerId !== state.customerId) return state;
  if (event.type === 'SendDecided') return prune(evolveGuard(decided(state, event), event));
  const next = { ...state, clock: Math.max(state.clock, event.at) };
  return prune(evolveGuard(apply(next, event), event));
}

function apply(state: CustomerPolicyState, event: PolicyEvent): CustomerPolicyState {
  switch (event.type) {
    case 'CustomerRegistered':
      return { ...state, registeredAt: state.registeredAt ?? event.at };
    case 'PlanChanged':
      return { ...state, plan: { planId: event.planId, validUntil: event.validUntil } };
    case 'ModuleToggled':
      return { ...state, modules: { ...state.modules, [event.module]: event.enabled } };
    case 'LimitsOverridden': {
      const { type: _type, customerId: _customer, ...override } = event;
      const grantsSomething = [event.daily, event.monthly, event.velocity, event.bulk].some((v) => v !== undefined);
      return { ...state, override: grantsSomething ? override : null };
    }
    case 'AllowedPurposesChanged':
      return event.instanceId === null
        ? { ...state, purposes: { ...state.purposes, customer: [...event.purposes] } }
        : { ...state, purposes: { ...state.purposes, instances: { ...state.purposes.instances, [event.instanceId]: [...event.purposes] } } };
    case 'RecipientSuppressed':
      return suppress(state, event);
    case 'RecipientUnsuppressed': {
      const recipient = recipientKey(event.recipient);
      const { [event.source]: _removed, ...rest } = state.suppressed[recipient] ?? {};
      const suppressed = { ...state.suppressed };
      if (Object.keys(rest).length === 0) delete suppressed[recipient];
      else suppressed[recipient] = rest;
      return { ...state, suppressed };
    }
    case 'RecipientIdentityLinked':
      return link(state, event);
    case 'InstancePausedForReview':
      return {
        ...state,
        paused: { ...state.paused, [event.instanceId]: { reason: event.reason, by: event.by, at: event.at, ...(event.signals ? { signals: event.signals } : {}) } },
      };
    case 'InstanceResumed': {
      // Counting starts afresh after a review, so the old window cannot re-pause it at once.
      const { [event.instanceId]: _paused, ...paused } = state.paused;
      const instances = updateInstance(state.instances, event.instanceId, (instance) => (instance.quality === null ? instance : { ...instance, quality: null }));
      return { ...state, paused, instances };
    }
    case 'SendDecided':
      return decided(state, event);
    case 'DeliveryOutcomeRecorded':
      return { ...state, instances: counted(state.instances, event.instanceId, event.at, event.delivered ? DELIVERED : FAILED) };
    default:
      return state; // the number guard's facts: evolveGuard folds them
  }
}

/**
 * Suppression events may come from the dashboard unnormalised; comparisons use E.164 (a linked id
 * is kept in its canonical form, see recipientKey).
 */
function suppress(state: CustomerPolicyState, event: RecipientSuppressed): CustomerPolicyState {
  const recipient = recipientKey(event.recipient);
  const entry = { reason: event.reason, by: event.by, at: event.at, ...(event.linkedFrom ? { via: 'linked_id' as const } : {}) };
  const next: CustomerPolicyState = {
    ...state,
    suppressed: { ...state.suppressed, [recipient]: { ...state.suppressed[recipient], [event.source]: entry } },
  };
  // A carried-over suppression is the same opt-out again: it was counted once, on the linked id.
  if (event.source !== 'opt_out' || !event.instanceId || event.linkedFrom) return next;
  return { ...next, instances: counted(next.instances, event.instanceId, event.at, OPTED_OUT) };
}

/**
 * Remembers on the instance that `lid` is `phone`; a re-link of the lid to another number replaces
 * the old one. A fact that names no valid lid, number or instance changes nothing (it cannot be
 * refused any more: it is already in the log).
 */
function link(state: CustomerPolicyState, event: RecipientIdentityLinked): CustomerPolicyState {
  const lid = typeof event.lid === 'string' ? canonicalLinkedId(event.lid) : null;
  const phone = typeof event.phone === 'string' ? normalizePhone(event.phone) : null;
  if (!lid || !phone || typeof event.instanceId !== 'string' || event.instanceId === '') return state;
  const links = state.identities[event.instanceId] ?? { phones: {}, lids: {} };
  const previous = links.phones[lid];
  if (previous === phone) return state;
  const lids = { ...links.lids };
  if (previous !== undefined) {
    const left = (lids[previous] ?? []).filter((known) => known !== lid);
    if (left.length === 0) delete lids[previous];
    else lids[previous] = left;
  }
  lids[phone] = [...(lids[phone] ?? []), lid];
  return { ...state, identities: { ...state.identities, [event.instanceId]: { phones: { ...links.phones, [lid]: phone }, lids } } };
}

/** What a decision changes: the quality counters, and for an accepted send the quotas, the bucket and the send memory. */
function decided(state: CustomerPolicyState, event: SendDecided): CustomerPolicyState {
  const next = copyState(state);
  next.clock = Math.max(state.clock, event.at);
  const accepted = event.decision === 'accepted';
  if (!accepted && event.errorCode !== 'policy_violation') return next;
  // The instance's quality and bucket in one record: one path of the trie copied per decision.
  next.instances = updateInstance(state.instances, event.instanceId, (instance) => {
    const quality = countQuality(instance.quality ?? undefined, event.at, accepted ? JUDGED_ACCEPTED : JUDGED_VIOLATION);
    const bucket = accepted ? { tokens: event.tokensLeft ?? 0, at: Math.max(instance.bucket?.at ?? event.at, event.at) } : instance.bucket;
    return { bucket, quality, guard: instance.guard } satisfies InstanceState;
  });
  if (!accepted) return next;

  next.quota = {
    day: countOne(next.quota.day, event.quotaWindows.day),
    month: countOne(next.quota.month, event.quotaWindows.month),
  };
  next.sends = rememberSend(next.sends, { at: event.at, instanceId: event.instanceId, recipient: event.recipient, digest: event.digest }, next.clock);
  return next;
}

/** What each fact adds to an instance's quality bucket (constants: read, never changed). */
type QualityAdd = Readonly<Partial<Record<QualityCounter, number>>>;
const JUDGED_ACCEPTED: QualityAdd = Object.freeze({ judged: 1, accepted: 1 });
const JUDGED_VIOLATION: QualityAdd = Object.freeze({ judged: 1, violations: 1 });
const DELIVERED: QualityAdd = Object.freeze({ delivered: 1 });
const FAILED: QualityAdd = Object.freeze({ failed: 1 });
const OPTED_OUT: QualityAdd = Object.freeze({ optOuts: 1 });

function counted(instances: CustomerPolicyState['instances'], instanceId: string, at: number, add: QualityAdd): CustomerPolicyState['instances'] {
  return updateInstance(instances, instanceId, (instance) => ({ ...instance, quality: countQuality(instance.quality ?? undefined, at, add) }));
}

function countOne(counter: { window: string; used: number }, window: string): { window: string; used: number } {
  const current = currentWindow(counter, window);
  return { window: current.window, used: current.used + 1 };
}

/**
 * Drops every window entry past its retention, at most once per hour of event time (so a fold
 * stays linear); the hour is taken from event time, so the same events prune the same way.
 */
function prune(state: CustomerPolicyState): CustomerPolicyState {
  const clock = state.clock;
  if (clock - state.prunedAt < HOUR_MS) return state;
  return {
    ...state,
    prunedAt: clock,
    sends: ageSends(state.sends, clock, state.prunedAt),
    instances: pruneInstances(state.instances, clock),
  };
}
