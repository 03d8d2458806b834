import type { PolicyEvent, RecipientIdentityLinked, RecipientSuppressed, RecipientUnsuppressed, SuppressionSource } from './events.ts';
import { isLinkedId, linkedPhonesOf, recipientKey, sameRecipients } from './linked-ids.ts';
import type { CustomerPolicyState } from './state.ts';

/**
 * What a suppression fact means for the numbers and linked ids known to be the same person, as
 * events the engine emits (so the log, the projections and a replay all see them):
 *  - a linked id suppressed: each number it is linked to is suppressed too (same source and reason);
 *  - a link learned: the number takes over the linked id's suppressions (same source, reason, at);
 *  - either lifted: every number and linked id of that person is lifted for that source.
 * `state` already includes `event`. Emitted events carry `linkedFrom` and cause nothing further.
 */
export function carryOverSuppressions(event: PolicyEvent, state: CustomerPolicyState): PolicyEvent[] {
  switch (event.type) {
    case 'RecipientSuppressed':
      return event.linkedFrom ? [] : suppressLinkedPhones(event, state);
    case 'RecipientUnsuppressed':
      return event.linkedFrom ? [] : liftSamePerson(event, state);
    case 'RecipientIdentityLinked':
      return takeOverOnLink(event, state);
    default:
      return [];
  }
}

function suppressLinkedPhones(event: RecipientSuppressed, state: CustomerPolicyState): PolicyEvent[] {
  const lid = recipientKey(event.recipient);
  if (!isLinkedId(lid)) return [];
  return linkedPhonesOf(state, lid)
    .filter((phone) => !state.suppressed[phone]?.[event.source])
    .map((phone) => carried(event.customerId, phone, lid, event.source, { reason: event.reason, by: event.by, at: event.at }));
}

function takeOverOnLink(event: RecipientIdentityLinked, state: CustomerPolicyState): PolicyEvent[] {
  // evolve ignored a link it could not read: then there is nothing to carry over.
  const lid = typeof event.lid === 'string' ? recipientKey(event.lid) : '';
  const phone = state.identities[event.instanceId]?.phones[lid];
  const held = state.suppressed[lid];
  if (!phone || !held) return [];
  return (['opt_out', 'manual'] as const)
    .filter((source) => held[source] && !state.suppressed[phone]?.[source])
    .map((source) => carried(event.customerId, phone, lid, source, held[source]!));
}

function liftSamePerson(event: RecipientUnsuppressed, state: CustomerPolicyState): PolicyEvent[] {
  const recipient = recipientKey(event.recipient);
  return sameRecipients(state, recipient)
    .filter((other) => state.suppressed[other]?.[event.source])
    .map((other) => ({
      type: 'RecipientUnsuppressed',
      customerId: event.customerId,
      at: event.at,
      recipient: other,
      source: event.source,
      by: event.by,
      ...(event.reason !== undefined ? { reason: event.reason } : {}),
      linkedFrom: recipient,
    }));
}

function carried(customerId: string, phone: string, lid: string, source: SuppressionSource, held: { reason: string; by: string; at: number }): RecipientSuppressed {
  return { type: 'RecipientSuppressed', customerId, at: held.at, recipient: phone, source, reason: held.reason, by: held.by, linkedFrom: lid };
}
