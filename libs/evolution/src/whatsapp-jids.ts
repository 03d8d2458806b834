// The JIDs under which an Evolution manager may have stored a message sent to a phone number.
//
// sendText sends the number's digits (send-text.ts). The manager does not store that as given:
// sendMessageWithTyping sends to (and prepareMessage stores as key.remoteJid) the JID that
// whatsappNumber() settles on (src/api/integrations/channel/whatsapp/whatsapp.baileys.service.ts):
// for Brazilian (55) numbers the form with or without the ninth digit that WhatsApp says exists,
// for Mexican (52) and Argentine (54) numbers the form with or without the extra digit after the
// country code, falling back to createJid (src/utils/createJid.ts), which drops those digits by
// rule. Which form an account has is WhatsApp's answer, not something the gateway can compute,
// and the simulator applies createJid's rule. So a lookup asks for every form: the digits as
// sent, plus for 55/52/54 numbers of 12 or 13 digits the other form. Other numbers have one form.
// (Asking without a remoteJid and matching locally would also work, but reads every message the
// instance sent in the time window.) Not covered: a manager that stores sent messages under a
// LID (`@lid`) JID.

const USER_SUFFIX = '@s.whatsapp.net';

/** 12 digits without the extra digit, 13 with it; `at` is where it goes. */
function withAndWithout(digits: string, at: number, extra: string): string[] {
  if (digits.length === 13) return [digits, digits.slice(0, at) + digits.slice(at + 1)];
  if (digits.length === 12) return [digits, digits.slice(0, at) + extra + digits.slice(at)];
  return [digits];
}

/** Digits of `phone` (E.164) in every form the manager may store, as user JIDs, the given form first. */
export function candidateJids(phone: string): string[] {
  const digits = phone.replace(/\D/g, '');
  let forms = [digits];
  // Brazil: 55 + two-digit area code, then the ninth digit (whatsappNumber: slice(4, 5)).
  if (digits.startsWith('55')) forms = withAndWithout(digits, 4, '9');
  // Mexico: 52 + 1 + number; Argentina: 54 + 9 + number (whatsappNumber's prefixes).
  else if (digits.startsWith('52')) forms = withAndWithout(digits, 2, '1');
  else if (digits.startsWith('54')) forms = withAndWithout(digits, 2, '9');
  return [...new Set(forms)].map((form) => `${form}${USER_SUFFIX}`);
}
