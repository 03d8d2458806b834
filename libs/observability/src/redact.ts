// What may be said about a person in a log line or an error record: never a message text, and a
// phone number only masked (enough to tell two apart when reading a log, not to call anyone).

/** "+14155552671" → "+1*******71": the first digit and the last two kept. */
export function maskPhone(phone: string): string {
  const digits = phone.replace(/\D/g, '');
  if (digits.length < 4) return '*'.repeat(phone.length);
  return `${phone.startsWith('+') ? '+' : ''}${digits[0]}${'*'.repeat(digits.length - 3)}${digits.slice(-2)}`;
}

// Seven or more digits, possibly with a leading + and separators: anything that could be a number.
const PHONE_LIKE = /\+?\d[\d ().-]{5,}\d/g;

/** Masks every phone-like run of digits in a free text (error messages, ids built from numbers). */
export function maskPhones(text: string): string {
  return text.replace(PHONE_LIKE, (match) => (match.replace(/\D/g, '').length >= 7 ? maskPhone(match) : match));
}

/** An error as one short line for logs and dead letters: name, code and message, phones masked, no stack. */
export function describeError(error: unknown, maxLength = 500): string {
  if (typeof error !== 'object' || error === null) return maskPhones(String(error)).slice(0, maxLength);
  const { name, code, message, cause } = error as { name?: unknown; code?: unknown; message?: unknown; cause?: { code?: unknown } };
  // Slonik's errors keep the name Error: their class says what happened, their cause the SQLSTATE.
  const label = typeof name === 'string' && name !== 'Error' ? name : (error.constructor?.name ?? 'Error');
  const sqlState = code ?? (typeof cause === 'object' && cause !== null ? cause.code : undefined);
  const head = `${label}${typeof sqlState === 'string' || typeof sqlState === 'number' ? ` [${sqlState}]` : ''}`;
  const text = typeof message === 'string' ? message : '';
  return `${head}: ${maskPhones(text)}`.slice(0, maxLength);
}
