// Who sent something, as an Evolution API v2 manager reports it: a phone number, a linked id
// (`@lid`, WhatsApp's alias that hides the number), or both.
//
// Where the manager puts them (read in the real source, evolution-api tags 2.3.6, 2.3.7, 2.4.0-rc2,
// src/api/integrations/channel/whatsapp/whatsapp.baileys.service.ts, and Baileys 7.0.0-rc.6/rc.9
// src/Utils/decode-wa-message.ts, which fills the key):
// - a direct message: key.remoteJid is the chat and key.remoteJidAlt the other form. 2.3.6 posts
//   the key as Baileys gives it (remoteJid may be the lid, remoteJidAlt the phone); 2.3.7 (~l.1478)
//   overwrites a lid remoteJid with the phone and keeps remoteJidAlt (so both are the phone);
//   2.4.0-rc2 (~l.1650) swaps them (remoteJid the phone, remoteJidAlt the lid). Older Baileys (6.x)
//   named them senderPn / senderLid.
// - a group message: key.participant and key.participantAlt (6.x: participantPn / participantLid).
// - a call (Baileys WACallEvent): `from` (the caller) and `chatId`, either of which may be a lid;
//   the manager replaces a lid `from` with the phone only when a call reply message is configured
//   (~l.1735 in 2.3.6); newer Baileys add callerPn.
// So the order of the fields says nothing: each candidate is classified by its own form.
import { parseJid, type JidParseCache } from './jid.ts';

export interface Identity {
  /** E.164, when some candidate was a phone JID. */
  phone?: string;
  /** The canonical linked id, `<digits>@lid`, when some candidate was one. */
  lid?: string;
}

/** The canonical form of a linked-id JID: `<digits>@lid`, any `:device` dropped; undefined for anything else. */
export function canonicalLid(value: unknown): string | undefined {
  const jid = parseJid(value);
  return jid?.kind === 'lid' ? jid.id.replace(/:\d+@/, '@') : undefined;
}

/**
 * The phone and the linked id among candidate JIDs (the first of each kind wins); anything else is
 * ignored. `jids`: the caller's cache of parsed numbers (the same answer without it).
 */
export function identityOf(candidates: readonly unknown[], jids?: JidParseCache): Identity {
  const identity: Identity = {};
  for (const candidate of candidates) {
    const jid = parseJid(candidate, jids);
    if (jid?.kind === 'user') identity.phone ??= jid.phone;
    else if (jid?.kind === 'lid') identity.lid ??= canonicalLid(candidate);
  }
  return identity;
}

/** True for a canonical linked id (`<digits>@lid`), the form a lid-only recipient is stored under. */
export const isCanonicalLid = (value: string): boolean => /^\d{5,20}@lid$/.test(value);
