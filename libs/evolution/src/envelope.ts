// The checks an instance manager's webhook envelope passes before it is recorded (the API's ingest)
// and again before it is mapped (the instance-events stage, for records written before the checks
// existed). A failing envelope is recorded as rejected with its reason and never mapped.
import { findUnsafeText } from '@gw/contract';
import { parseJid, type JidParseCache } from './jid.ts';

/** The longest text a manager may send us in any field (a WhatsApp text is at most 65,536). */
export const MANAGER_TEXT_MAX = 65_536;

type Json = Record<string, unknown>;
const asObject = (value: unknown): Json => (typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : {});
const asList = (value: unknown): unknown[] => (Array.isArray(value) ? value : value === undefined || value === null ? [] : [value]);

/** Normalised event name: messages.upsert, as the mapping reads it (Evolution posts MESSAGES_UPSERT or messages.upsert). */
export const eventName = (value: unknown): string => String(value ?? '').toLowerCase().replace(/_/g, '.');

/** The JID fields of each event kind that must be well formed when present (required ones marked). */
const JID_FIELDS: Record<string, Array<{ path: string[]; required?: boolean }>> = {
  'messages.upsert': [{ path: ['key', 'remoteJid'], required: true }, { path: ['key', 'participant'] }, { path: ['key', 'remoteJidAlt'] }],
  'messages.update': [{ path: ['remoteJid'] }, { path: ['key', 'remoteJid'] }],
  'send.message': [{ path: ['key', 'remoteJid'], required: true }],
  call: [{ path: ['from'] }, { path: ['chatId'] }],
  'groups.update': [{ path: ['id'] }],
  'group.update': [{ path: ['id'] }],
  'group-participants.update': [{ path: ['id'] }],
  'group.participants.update': [{ path: ['id'] }],
  // data[].id of a chat is the manager's database row id (a cuid), not a JID: chats.upsert posts
  // `[{ ...existingChat, name }]` (whatsapp.baileys.service.ts l.1173 in 2.3.6, l.1191 in 2.3.7,
  // l.1361 in 2.4.0-rc2). The chat is remoteJid.
  'chats.upsert': [{ path: ['remoteJid'] }],
  'chats.update': [{ path: ['remoteJid'] }],
};

/**
 * Fields that carry media bytes we never read: with "webhook base64" on, the manager adds the
 * whole file as message.base64 (whatsapp.baileys.service.ts l.1318 in 2.3.6), and each media
 * message carries thumbnails, keys and hashes (deserializeMessageBuffers turns Baileys' Buffers
 * into Uint8Arrays, which JSON writes as {"0":…,"1":…}). A QR's image (qrcode.base64) is one too.
 */
const BINARY_FIELDS = new Set([
  'base64',
  'jpegThumbnail',
  'pngThumbnail',
  'thumbnail',
  'mediaKey',
  'fileSha256',
  'fileEncSha256',
  'thumbnailSha256',
  'thumbnailEncSha256',
  'midQualityFileSha256',
  'midQualityFileEncSha256',
  'streamingSidecar',
  'scansSidecar',
  'waveform',
  'messageSecret',
]);

const STRIP_DEPTH = 65;

/**
 * The envelope without its binary fields, at any depth (a copy; the input is not changed). Done
 * before the safety check and before the record is appended, so the record stays small and a
 * media message with a caption is not refused for the size of its file.
 */
export function withoutBinaryFields<T>(value: T, depth = 0): T {
  // Past the depth findUnsafeText refuses (64), left as it is: no deep recursion on hostile input.
  if (typeof value !== 'object' || value === null || depth > STRIP_DEPTH) return value;
  if (Array.isArray(value)) return value.map((item) => withoutBinaryFields(item, depth + 1)) as T;
  // fromEntries defines own properties: a "__proto__" key stays a key (an assignment would set the
  // copy's prototype, and the checks below would then read the attacker's object through it).
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key]) => !BINARY_FIELDS.has(key))
      .map(([key, inner]) => [key, withoutBinaryFields(inner, depth + 1)]),
  ) as T;
}

/**
 * Why the envelope is refused, or null when it may be recorded and mapped. The reason names the
 * field and the rule, never the value (it may be a phone number or a message). `jids`: the
 * caller's cache of parsed numbers (the same answer without it).
 */
export function envelopeProblem(envelope: unknown, jids?: JidParseCache): string | null {
  if (typeof envelope !== 'object' || envelope === null || Array.isArray(envelope)) return 'the envelope is not a JSON object';
  const { event } = envelope as Json;
  if (typeof event !== 'string' || !/^[A-Za-z0-9._-]{1,64}$/.test(event)) return 'event is not an event name';
  const unsafe = findUnsafeText(envelope, MANAGER_TEXT_MAX);
  if (unsafe) return `${unsafe.path} ${unsafe.problem}`;
  // Own entries only: an event named "constructor" must not find Object.prototype's.
  const name = eventName(event);
  const fields = Object.hasOwn(JID_FIELDS, name) ? JID_FIELDS[name]! : [];
  const items = asList((envelope as Json).data);
  for (let i = 0; i < items.length; i++) {
    for (const { path, required } of fields) {
      let value: unknown = items[i];
      for (const step of path) value = asObject(value)[step];
      const where = `data${Array.isArray((envelope as Json).data) ? `[${i}]` : ''}.${path.join('.')}`;
      if (value === undefined || value === null || value === '') {
        if (required) return `${where} is missing`;
        continue;
      }
      if (!parseJid(value, jids)) return `${where} is not a well-formed JID`;
    }
  }
  return null;
}
