// Port of Evolution's src/utils/createJid.ts, so the remoteJid the simulator answers
// with is the one a real Evolution would compute for the same input.

const GROUP_SUFFIX = '@g.us';
const USER_SUFFIX = '@s.whatsapp.net';

/** Mexico (52) and Argentina (54) mobile numbers drop the extra digit after the country code. */
function formatMxOrArNumber(digits: string): string {
  const countryCode = digits.substring(0, 2);
  if ((countryCode === '52' || countryCode === '54') && digits.length === 13) {
    return countryCode + digits.substring(3);
  }
  return digits;
}

/** Brazil: the ninth digit is dropped for DDD >= 31 when the subscriber number starts with 7-9. */
function formatBrNumber(digits: string): string {
  const match = /^(\d{2})(\d{2})\d(\d{8})$/.exec(digits);
  if (!match || match[1] !== '55') return digits;
  const ddd = Number.parseInt(match[2] ?? '0', 10);
  const joker = Number.parseInt((match[3] ?? '0')[0] ?? '0', 10);
  if (joker < 7 || ddd < 31) return match[0];
  return `${match[1]}${match[2]}${match[3]}`;
}

export function createJid(input: string): string {
  let number = input.replace(/:\d+/, '');

  if (number.includes(GROUP_SUFFIX) || number.includes(USER_SUFFIX) || number.includes('@lid')) return number;
  if (number.includes('@broadcast')) return number;

  number = number
    .replace(/\s/g, '')
    .replace(/\+/g, '')
    .replace(/\(/g, '')
    .replace(/\)/g, '')
    .split(':')[0]!
    .split('@')[0]!;

  if (number.includes('-') && number.length >= 23) {
    return `${number.replace(/[^\d-]/g, '')}${GROUP_SUFFIX}`;
  }

  number = number.replace(/\D/g, '');

  if (number.length >= 18) return `${number}${GROUP_SUFFIX}`;

  number = formatMxOrArNumber(number);
  number = formatBrNumber(number);
  return `${number}${USER_SUFFIX}`;
}

export function isGroupJid(jid: string): boolean {
  return jid.endsWith(GROUP_SUFFIX);
}

/** The user part of a jid: what Evolution puts in `number` of its onWhatsApp answer. */
export function jidUser(jid: string): string {
  return jid.split('@')[0] ?? jid;
}

const LID_SUFFIX = '@lid';

export function isLidJid(jid: string): boolean {
  return jid.endsWith(LID_SUFFIX);
}

/** `123456789012345` or `123456789012345@lid` → the `@lid` jid Baileys 7 addresses that user by. */
export function lidJid(lid: string): string {
  const user = lid.trim().replace(/@.*$/, '').replace(/:\d+$/, '');
  return `${user}${LID_SUFFIX}`;
}
