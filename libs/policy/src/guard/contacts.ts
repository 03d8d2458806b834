import { normalizePhone } from '@gw/contract';
import { canonicalLinkedId, sameRecipients } from '../linked-ids.ts';
import type { CustomerPolicyState } from '../state.ts';
import { guardOf } from '../instances.ts';
import type { InstanceGuard } from './state.ts';
import { firstIndexWhere } from '../structures/sorted.ts';

/**
 * The key of a send's recipient in the contact set. Commands arrive normalised (E.164, the API
 * does it), so the hot path does not parse the number again; a linked id is made canonical.
 */
export const sendContactKey = (recipient: string): string => canonicalLinkedId(recipient) ?? recipient;

/** The key of a contact reported by the manager (ContactLearned): E.164 or canonical `<digits>@lid`; null when it is neither. */
export const learnedContactKey = (contact: string): string | null => canonicalLinkedId(contact) ?? normalizePhone(contact);

/** Contact sets are split in this many shards, by the key's last two digits (uniform in numbers and linked ids). */
const SHARDS = 100;

/** The shard a contact is kept in: its last two digits (a key without digits, which no send has, goes to shard 0). */
export function contactShard(key: string): number {
  // The last two digits read from the end, not by stripping every non-digit first: asked of
  // each send's recipient in decide and again in evolve (issue 29).
  let shard = 0;
  let scale = 1;
  for (let index = key.length - 1; index >= 0 && scale < 100; index -= 1) {
    const code = key.charCodeAt(index) - 48; // '0'
    if (code < 0 || code > 9) continue;
    shard += code * scale;
    scale *= 10;
  }
  return shard;
}

/** Where `key` is, or would go, in the sorted `shard`. */
const indexIn = (shard: readonly string[], key: string): number => firstIndexWhere(shard, (k) => k >= key);

function knows(guard: InstanceGuard | undefined, key: string): boolean {
  const shard = guard?.contacts[contactShard(key)];
  return shard !== undefined && shard[indexIn(shard, key)] === key;
}

/**
 * A first contact: someone this instance never sent an accepted message to and who never wrote to
 * it — under the recipient's own key or any number or linked id known to be the same person
 * (state.identities, on any instance, as for suppressions: a linked id names the person).
 */
export function isFirstContact(state: CustomerPolicyState, instanceId: string, recipient: string): boolean {
  return knowsNoneOf(state, guardOf(state.instances, instanceId), recipient);
}

/** isFirstContact for the instance whose guard is `guard` (the rules have it at hand: RuleContext.instance). */
export function knowsNoneOf(state: CustomerPolicyState, guard: InstanceGuard | undefined, recipient: string): boolean {
  if (!guard) return true;
  const key = sendContactKey(recipient);
  if (knows(guard, key)) return false;
  return !sameRecipients(state, key).some((other) => knows(guard, other));
}

/** The guard with `key` in its contact set (unchanged when already there); a fold copies one shard and the list of shards. */
export function withContact(guard: InstanceGuard, key: string): InstanceGuard {
  const index = contactShard(key);
  const shard = guard.contacts[index] ?? [];
  const at = indexIn(shard, key);
  if (shard[at] === key) return guard;
  const contacts = guard.contacts.length === SHARDS ? guard.contacts.slice() : Array.from({ length: SHARDS }, (_, i) => guard.contacts[i] ?? []);
  contacts[index] = [...shard.slice(0, at), key, ...shard.slice(at)];
  return { ...guard, contacts };
}
