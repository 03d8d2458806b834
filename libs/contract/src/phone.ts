import { parsePhoneNumberFromString } from 'libphonenumber-js/max';

/**
 * Normalises a recipient given in international format to E.164 ("+15551234567"), or returns
 * null when it is not a possible number. A leading "+" is optional; spaces, dots, dashes and
 * brackets are ignored. Every comparison (suppression, quotas, bulk detection) uses this form.
 */
export function normalizePhone(raw: string): string | null {
  const trimmed = raw.trim();
  if (!/^\+?[0-9 ().-]{6,32}$/.test(trimmed)) return null;
  const withPlus = trimmed.startsWith('+') ? trimmed : `+${trimmed}`;
  const parsed = parsePhoneNumberFromString(withPlus);
  if (!parsed || !parsed.isPossible()) return null;
  return parsed.number;
}
