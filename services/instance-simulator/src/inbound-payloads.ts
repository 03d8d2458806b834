import type { EvolutionVersion } from './evolution-version.ts';
import type { InboundMessage } from './sim-events.ts';

// The `messages.upsert` data of a received message, per Evolution release: Baileys 7's key
// (decode-wa-message.ts: remoteJidAlt / participantAlt / addressingMode, Baileys 7.0.0-rc.6 for
// 2.3.6, rc.9 for 2.3.7 and 2.4.0-rc2) run through prepareMessage and the handler's LID fix-up
// (whatsapp.baileys.service.ts messages.upsert: 2.3.7 l.1478, 2.4.0-rc2 l.1650; none in 2.3.6).

export interface InboundKey {
  remoteJid: string;
  remoteJidAlt?: string;
  fromMe: false;
  id: string;
  participant?: string;
  participantAlt?: string;
  addressingMode: 'pn' | 'lid';
}

/** The key exactly as Baileys gives it (undefined fields are dropped by JSON). */
export function baileysKey(message: InboundMessage): InboundKey {
  const group = message.participant !== null;
  return {
    remoteJid: message.remote_jid,
    ...(!group && message.sender_alt ? { remoteJidAlt: message.sender_alt } : {}),
    fromMe: false,
    id: message.id,
    ...(group ? { participant: message.participant! } : {}),
    ...(group && message.sender_alt ? { participantAlt: message.sender_alt } : {}),
    addressingMode: message.addressing_mode,
  };
}

/**
 * The key as the messages.upsert webhook posts it. A LID sender whose number WhatsApp gave:
 * 2.3.6 posts Baileys' key (remoteJid @lid, remoteJidAlt the number); 2.3.7 overwrites remoteJid
 * with remoteJidAlt (both the number); 2.4.0-rc2 swaps them and sets addressingMode 'pn'.
 */
export function upsertKey(message: InboundMessage, version: EvolutionVersion): InboundKey {
  const key = baileysKey(message);
  if (version === '2.3.6' || !key.remoteJid.endsWith('@lid') || !key.remoteJidAlt) return key;
  if (version === '2.3.7') return { ...key, remoteJid: key.remoteJidAlt };
  return { ...key, remoteJid: key.remoteJidAlt, remoteJidAlt: key.remoteJid, addressingMode: 'pn' };
}

/**
 * deserializeMessageBuffers turns every Buffer into a Uint8Array and every Long into a plain
 * object, so the webhook JSON carries bytes as {"0": n, "1": n, ...} and 64-bit integers as
 * {low, high, unsigned}.
 */
function indexedBytes(bytes: Buffer): Record<string, number> {
  return Object.fromEntries([...bytes].map((byte, index) => [String(index), byte]));
}

function long(value: number, unsigned: boolean): { low: number; high: number; unsigned: boolean } {
  return { low: value % 2 ** 32, high: Math.floor(value / 2 ** 32), unsigned };
}

/**
 * prepareMessage's `message` and `messageType` (2.3.6 l.4486, 2.3.7 l.4652, 2.4.0-rc2 l.5181):
 * an extendedTextMessage is flattened into `conversation` (messageType 'conversation'); an image
 * keeps Baileys' imageMessage fields. `base64` is added afterwards when the webhook has base64 on.
 */
export function upsertMessage(message: InboundMessage, base64: boolean): { message: Record<string, unknown>; messageType: string } {
  const content = message.content;
  if (content.type !== 'imageMessage') return { message: { conversation: content.text }, messageType: 'conversation' };
  const file = Buffer.from(content.base64, 'base64');
  const digest = (salt: string) => Buffer.from(`${salt}:${message.id}`.padEnd(32, '.').slice(0, 32));
  const imageMessage = {
    url: `https://mmg.whatsapp.net/o1/v/t24/f2/m232/${message.id}.enc`,
    mimetype: content.mimetype,
    ...(content.caption !== null ? { caption: content.caption } : {}),
    fileSha256: indexedBytes(digest('sha')),
    fileLength: long(file.length, true),
    height: 1,
    width: 1,
    mediaKey: indexedBytes(digest('key')),
    fileEncSha256: indexedBytes(digest('enc')),
    directPath: `/o1/v/t24/f2/m232/${message.id}.enc`,
    mediaKeyTimestamp: long(message.timestamp, false),
  };
  return {
    message: { imageMessage, ...(base64 ? { base64: content.base64 } : {}) },
    messageType: 'imageMessage',
  };
}
