import { normalizePhone } from '@gw/contract';
import type { CustomerPolicyState } from './state.ts';

/**
 * WhatsApp hides many senders' numbers behind a "linked id" JID (`<digits>@lid`); the manager
 * reports the number beside it once it knows it (Evolution API 2.3.7,
 * src/api/integrations/channel/whatsapp/whatsapp.baileys.service.ts: `key.remoteJid` ending in
 * `@lid` with the phone JID in `key.remoteJidAlt`). A linked id names one WhatsApp user.
 */
const LINKED_ID = /^[0-9]{1,32}@lid$/;

/** The canonical form of a linked id (`<digits>@lid`), or null when `value` is not one. */
export function canonicalLinkedId(value: string): string | null {
  // Without an '@' it cannot be one: the rules ask this of every recipient (issue 29), and most are numbers.
  if (!value.includes('@')) return null;
  const lowered = value.trim().toLowerCase();
  return LINKED_ID.test(lowered) ? lowered : null;
}

export const isLinkedId = (value: string): boolean => canonicalLinkedId(value) !== null;

/**
 * The key a suppression recipient is kept under: a linked id as its canonical form, a number as
 * E.164; anything else as given (trimmed), where it matches no send.
 */
export const recipientKey = (recipient: string): string => canonicalLinkedId(recipient) ?? normalizePhone(recipient) ?? recipient.trim();

/**
 * The linked ids known for an E.164 number, on any of the customer's instances. A link is stored
 * under the instance that learned it, but a linked id names the person, not the conversation, so
 * it counts on every instance (docs/decisions.md, "Linked ids").
 */
export function linkedIdsOf(state: CustomerPolicyState, phone: string): string[] {
  // Asked of every recipient on every decision (issue 29): nothing is allocated unless a link is found.
  let found: Set<string> | undefined;
  for (const instanceId in state.identities) {
    const lids = state.identities[instanceId]!.lids[phone];
    if (lids) for (const lid of lids) (found ??= new Set()).add(lid);
  }
  return found ? [...found] : [];
}

/** The numbers a linked id is known to be, on any instance (normally one). */
export function linkedPhonesOf(state: CustomerPolicyState, lid: string): string[] {
  const found = new Set<string>();
  for (const links of Object.values(state.identities)) {
    const phone = links.phones[lid];
    if (phone !== undefined) found.add(phone);
  }
  return [...found];
}

/**
 * Everything known to be the same person as `recipient` (a number or a linked id), itself
 * excluded: numbers and linked ids reachable through links, transitively.
 */
export function sameRecipients(state: CustomerPolicyState, recipient: string): string[] {
  // Nobody linked to it (the common case): the walk below would find nothing, so skip its sets.
  const direct = isLinkedId(recipient) ? linkedPhonesOf(state, recipient) : linkedIdsOf(state, recipient);
  if (direct.length === 0) return [];
  const seen = new Set([recipient]);
  const queue = [recipient];
  while (queue.length > 0) {
    const current = queue.shift()!;
    const next = isLinkedId(current) ? linkedPhonesOf(state, current) : linkedIdsOf(state, current);
    for (const other of next) {
      if (seen.has(other)) continue;
      seen.add(other);
      queue.push(other);
    }
  }
  seen.delete(recipient);
  return [...seen];
}
