import { normalizePhone } from '@gw/contract';
import { RETENTION } from './config/policy-config.ts';
import type { PolicyEvent, RecipientSuppressed, SendDecided } from './events.ts';
import { countQuality } from './quality/quality-buckets.ts';
import { currentWindow } from './rules/quota-rule.ts';
import { bulkShard, type CustomerPolicyState } from './state.ts';

const HOUR_MS = 3_600_000;

/**
 * Pure fold of one event into the customer's state. It needs no config: every figure that
 * depends on configuration was computed by the decider and recorded in the event. Events of
 * another customer are ignored (the state is per customer). Never mutates its input.
 */
export function evolve(state: CustomerPolicyState, event: PolicyEvent): CustomerPolicyState {
  if (event.customerId !== state.customerId) return state;
  const next = { ...state, clock: Math.max(state.clock, event.at) };
  return prune(apply(next, event));
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
      const recipient = e164(event.recipient);
      const { [event.source]: _removed, ...rest } = state.suppressed[recipient] ?? {};
      const suppressed = { ...state.suppressed };
      if (Object.keys(rest).length === 0) delete suppressed[recipient];
      else suppressed[recipient] = rest;
      return { ...state, suppressed };
    }
    case 'InstancePausedForReview':
      return {
        ...state,
        paused: { ...state.paused, [event.instanceId]: { reason: event.reason, by: event.by, at: event.at, ...(event.signals ? { signals: event.signals } : {}) } },
      };
    case 'InstanceResumed': {
      // Counting starts afresh after a review, so the old window cannot re-pause it at once.
      const { [event.instanceId]: _paused, ...paused } = state.paused;
      const { [event.instanceId]: _quality, ...quality } = state.quality;
      return { ...state, paused, quality };
    }
    case 'SendDecided':
      return decided(state, event);
    case 'DeliveryOutcomeRecorded':
      return {
        ...state,
        quality: { ...state.quality, [event.instanceId]: countQuality(state.quality[event.instanceId], event.at, event.delivered ? { delivered: 1 } : { failed: 1 }) },
      };
  }
}

/** Suppression events may come from the dashboard unnormalised; comparisons use E.164. */
const e164 = (recipient: string): string => normalizePhone(recipient) ?? recipient.trim();

function suppress(state: CustomerPolicyState, event: RecipientSuppressed): CustomerPolicyState {
  const recipient = e164(event.recipient);
  const next: CustomerPolicyState = {
    ...state,
    suppressed: { ...state.suppressed, [recipient]: { ...state.suppressed[recipient], [event.source]: { reason: event.reason, by: event.by, at: event.at } } },
  };
  if (event.source !== 'opt_out' || !event.instanceId) return next;
  return { ...next, quality: { ...next.quality, [event.instanceId]: countQuality(next.quality[event.instanceId], event.at, { optOuts: 1 }) } };
}

function decided(state: CustomerPolicyState, event: SendDecided): CustomerPolicyState {
  const accepted = event.decision === 'accepted';
  const violation = event.errorCode === 'policy_violation';
  let next = state;
  if (accepted || violation) {
    const add = accepted ? { judged: 1, accepted: 1 } : { judged: 1, violations: 1 };
    next = { ...next, quality: { ...next.quality, [event.instanceId]: countQuality(next.quality[event.instanceId], event.at, add) } };
  }
  if (!accepted) return next;

  const previousBucket = next.buckets[event.instanceId];
  const sentByInstance = next.lastSend[event.instanceId] ?? {};
  const shard = bulkShard(event.digest);
  const digests = next.bulk[shard] ?? {};
  return {
    ...next,
    quota: {
      day: countOne(next.quota.day, event.quotaWindows.day),
      month: countOne(next.quota.month, event.quotaWindows.month),
    },
    buckets: { ...next.buckets, [event.instanceId]: { tokens: event.tokensLeft ?? 0, at: Math.max(previousBucket?.at ?? event.at, event.at) } },
    lastSend: { ...next.lastSend, [event.instanceId]: { ...sentByInstance, [event.recipient]: Math.max(sentByInstance[event.recipient] ?? event.at, event.at) } },
    bulk: { ...next.bulk, [shard]: { ...digests, [event.digest]: rememberRecipient(digests[event.digest], event.recipient, event.at, next.clock) } },
  };
}

function countOne(counter: { window: string; used: number }, window: string): { window: string; used: number } {
  const current = currentWindow(counter, window);
  return { window: current.window, used: current.used + 1 };
}

/** Adds the recipient to a digest's memory, forgetting what is past retention and the oldest beyond the cap. */
function rememberRecipient(seen: Record<string, number> | undefined, recipient: string, at: number, clock: number): Record<string, number> {
  const entries = Object.entries({ ...seen, [recipient]: Math.max(seen?.[recipient] ?? at, at) }).filter(([, t]) => t > clock - RETENTION.bulkMs);
  if (entries.length > RETENTION.bulkRecipientsPerDigest) {
    entries.sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
    entries.length = RETENTION.bulkRecipientsPerDigest;
  }
  return Object.fromEntries(entries);
}

/**
 * Drops every window entry past its retention, at most once per hour of event time (so a fold
 * stays linear); the hour is taken from event time, so the same events prune the same way.
 */
function prune(state: CustomerPolicyState): CustomerPolicyState {
  const clock = state.clock;
  if (clock - state.prunedAt < HOUR_MS) return state;
  const keepAfter = (retention: number) => ([, at]: [string, number]) => at > clock - retention;

  const bulk: CustomerPolicyState['bulk'] = {};
  for (const [shard, digests] of Object.entries(state.bulk)) {
    const keptDigests: Record<string, Record<string, number>> = {};
    for (const [digest, seen] of Object.entries(digests)) {
      const kept = Object.entries(seen).filter(keepAfter(RETENTION.bulkMs));
      if (kept.length > 0) keptDigests[digest] = Object.fromEntries(kept);
    }
    if (Object.keys(keptDigests).length > 0) bulk[shard] = keptDigests;
  }
  const lastSend: CustomerPolicyState['lastSend'] = {};
  for (const [instance, sent] of Object.entries(state.lastSend)) {
    const kept = Object.entries(sent).filter(keepAfter(RETENTION.recipientIntervalMs));
    if (kept.length > 0) lastSend[instance] = Object.fromEntries(kept);
  }
  const quality: CustomerPolicyState['quality'] = {};
  for (const [instance, buckets] of Object.entries(state.quality)) {
    const kept = buckets.filter((b) => b.hour > clock - RETENTION.qualityHours * HOUR_MS);
    if (kept.length > 0) quality[instance] = kept;
  }
  return {
    ...state,
    prunedAt: clock,
    lastSend,
    buckets: Object.fromEntries(Object.entries(state.buckets).filter(([, b]) => b.at > clock - RETENTION.idleBucketMs)),
    bulk,
    quality,
  };
}
