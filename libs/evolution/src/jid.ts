// WhatsApp JIDs as an Evolution API v2 manager reports them: what is well formed, and the phone
// number behind a user JID. Anything else (a NUL, free text, a number that cannot exist) is not a
// JID and is refused at the boundary, so it can never reach a stage as a recipient.
import { normalizePhone } from '@gw/contract';

export type Jid =
  | { kind: 'user'; phone: string }
  | { kind: 'group'; id: string }
  | { kind: 'broadcast'; id: string }
  /** A linked id: a stable alias of a user that does not reveal the number. */
  | { kind: 'lid'; id: string }
  | { kind: 'newsletter'; id: string };

const USER = /^(\d{5,20})(?::\d{1,3})?@(?:s\.whatsapp\.net|c\.us)$/;
const GROUP = /^\d{5,20}(?:-\d{5,20})?@g\.us$/;
const BROADCAST = /^(?:status|\d{5,20})@broadcast$/;
const LID = /^\d{5,20}(?::\d{1,3})?@lid$/;
const NEWSLETTER = /^\d{5,25}@newsletter$/;

/**
 * The phones behind the user JIDs' digits seen last (null: not a possible number). Made and owned
 * by a caller that parses JIDs on a hot path, and passed in: normalizePhone's libphonenumber parse
 * is the costly part of parsing a JID (for a +1 number it tries each NANP country's patterns), and
 * the same recipient comes back in each of the manager's webhooks about one send (send.message,
 * then one messages.update per status) and in every message of a conversation: about 7 % of the
 * API's CPU under the send path (issue 28). The answer depends on the digits alone, so a
 * remembered one is the same. Bounded: the one used longest ago is forgotten first.
 */
export class JidParseCache {
  private readonly phones = new Map<string, string | null>();

  constructor(readonly capacity = 4096) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError('a JidParseCache holds at least one number');
  }

  /** How many numbers it remembers now (at most `capacity`). */
  get size(): number {
    return this.phones.size;
  }

  phoneOfDigits(digits: string): string | null {
    const known = this.phones.get(digits);
    if (known !== undefined) {
      // Used again: moved to the newest end of the Map's insertion order.
      this.phones.delete(digits);
      this.phones.set(digits, known);
      return known;
    }
    const phone = phoneOfDigits(digits);
    if (this.phones.size >= this.capacity) this.phones.delete(this.phones.keys().next().value!);
    this.phones.set(digits, phone);
    return phone;
  }
}

const phoneOfDigits = (digits: string): string | null => normalizePhone(`+${digits}`);

/**
 * The JID parsed, or null when it is not a well-formed one (a user JID must hold a possible phone
 * number). `cache`: the caller's, to parse a number seen recently without libphonenumber; the
 * answer is the same without it.
 */
export function parseJid(value: unknown, cache?: JidParseCache): Jid | null {
  if (typeof value !== 'string' || value.length > 64) return null;
  const user = USER.exec(value);
  if (user) {
    const phone = cache ? cache.phoneOfDigits(user[1]!) : phoneOfDigits(user[1]!);
    return phone ? { kind: 'user', phone } : null;
  }
  if (GROUP.test(value)) return { kind: 'group', id: value };
  if (BROADCAST.test(value)) return { kind: 'broadcast', id: value };
  if (LID.test(value)) return { kind: 'lid', id: value };
  if (NEWSLETTER.test(value)) return { kind: 'newsletter', id: value };
  return null;
}

/** The E.164 phone of a user JID; undefined for any other JID or for no JID. */
export function phoneOfJid(value: unknown, cache?: JidParseCache): string | undefined {
  const jid = parseJid(value, cache);
  return jid?.kind === 'user' ? jid.phone : undefined;
}
