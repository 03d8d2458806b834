import { randomBytes, randomUUID } from 'node:crypto';

/**
 * Message ids as Baileys' generateMessageIDV2 makes them for messages Evolution sends:
 * '3EB0' + 18 upper-case hex characters. Baileys' getDevice() maps that form to 'web',
 * which is the `source` Evolution reports for its own sends.
 */
export function newMessageId(): string {
  return '3EB0' + randomBytes(9).toString('hex').toUpperCase();
}

/** Evolution uses uuid v4 for instanceId and, upper-cased, for a generated instance token. */
export function newInstanceId(): string {
  return randomUUID();
}

export function newInstanceToken(): string {
  return randomUUID().toUpperCase();
}

const PAIRING_ALPHABET = 'ABCDEFGHJKLMNPQRSTVWXYZ0123456789';

/** WhatsApp "link with phone number" codes are 8 characters (shown as XXXX-XXXX). */
export function newPairingCode(): string {
  const bytes = randomBytes(8);
  let code = '';
  for (const byte of bytes) code += PAIRING_ALPHABET[byte % PAIRING_ALPHABET.length];
  return code;
}

/**
 * The raw QR string Baileys emits: ref,noiseKey,identityKey,advSecret (base64 parts).
 * Only its look matters here; the PNG rendering comes in a later issue.
 */
export function newQrCodeString(): string {
  const ref = '2@' + randomBytes(48).toString('base64');
  const parts = [randomBytes(32), randomBytes(32), randomBytes(32)].map((b) => b.toString('base64'));
  return [ref, ...parts].join(',');
}

/** Prisma cuid-like id: the `Message` row id (fetchMessages' `id`, messages.update's `messageId`). */
export function newMessageRowId(): string {
  const alphabet = '0123456789abcdefghijklmnopqrstuvwxyz';
  let id = 'cm';
  for (const byte of randomBytes(23)) id += alphabet[byte % 36];
  return id;
}

/** Prisma cuid-like id of a `Chat` row ('c' + 24 base36): chats.upsert data[].id when Evolution renames a chat. */
export function newChatRowId(): string {
  const alphabet = '0123456789abcdefghijklmnopqrstuvwxyz';
  let id = 'c';
  for (const byte of randomBytes(24)) id += alphabet[byte % 36];
  return id;
}
