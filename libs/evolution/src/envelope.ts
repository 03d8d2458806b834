// The checks an instance manager's webhook envelope passes before it is recorded (the API's ingest)
// and again before it is mapped (the instance-events stage, for records written before the checks
// existed). A failing envelope is recorded as rejected with its reason and never mapped.
import { findUnsafeText } from '@gw/contract';
import { parseJid } from './jid.ts';

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
  'chats.upsert': [{ path: ['remoteJid'] }, { path: ['id'] }],
  'chats.update': [{ path: ['remoteJid'] }, { path: ['id'] }],
};

/**
 * Why the envelope is refused, or null when it may be recorded and mapped. The reason names the
 * field and the rule, never the value (it may be a phone number or a message).
 */
export function envelopeProblem(envelope: unknown): string | null {
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
      if (!parseJid(value)) return `${where} is not a well-formed JID`;
    }
  }
  return null;
}
