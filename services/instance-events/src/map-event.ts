import { parseJid, phoneOfJid } from '@gw/evolution';

/** A gateway event of the customer webhook contract (spec 6.3): its name and extra fields. */
export interface GatewayEvent {
  event: string;
  fields: Record<string, string | boolean>;
}

export interface OptFact {
  kind: 'suppress' | 'unsuppress';
  recipient: string;
  keyword: string;
  /** The index, in `events`, of the message.received event of the message that asked for it. */
  eventIndex: number;
}

/** A received message, for the inbound log (the inbound_messages projection). */
export interface InboundMessage {
  /** The index, in `events`, of the message.received / group.message_received event it became (its id is that event's). */
  eventIndex: number;
  chat: 'direct' | 'group';
  sender?: string;
  groupId?: string;
  text: string;
  messageType?: string;
  externalId?: string;
  /** A keyword that opted the sender out or back in, or free text that reads like an opt-out request. */
  optAction: 'opt_out' | 'opt_in' | 'flagged' | null;
}

export interface Mapped {
  events: GatewayEvent[];
  facts: OptFact[];
  /** The connection projection's new values, when the event reports them. */
  connection?: { state: string | null; qrAvailable: boolean };
  /** Calls seen, for the accepted-call projection. */
  calls: Array<{ id: string; status: string }>;
  /** Received messages, for the inbound log; free-text opt-out requests are flagged there for review. */
  inbound: InboundMessage[];
  /** The manager's delivery reports (delivered, read, …) by provider message id, for the message timeline. */
  receipts: Array<{ externalId: string; status: string }>;
}

export interface MapContext {
  optOutKeywords: string[];
  optInKeywords: string[];
  /** Ids of the calls known to have been accepted (a terminate of one is not missed). */
  acceptedCalls: ReadonlySet<string>;
}

type Json = Record<string, unknown>;

const asObject = (value: unknown): Json => (typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : {});
const asList = (value: unknown): Json[] => (Array.isArray(value) ? value.map(asObject) : value === undefined || value === null ? [] : [asObject(value)]);
const str = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);

/** The E.164 phone of a WhatsApp user jid (5511988887777@s.whatsapp.net, with or without a :device); undefined for any other. */
export const phoneFromJid = (jid: string | undefined): string | undefined => phoneOfJid(jid);

const EDGE = /^[\s\p{P}\p{S}]$/u;

/**
 * Drops spaces, punctuation and symbols at both ends in one pass over the code points. (A regex
 * anchored at the end, /[…]+$/, retries from every position of a long inner run of punctuation:
 * quadratic, and a stranger's message of 65k dots stalled the consumer.)
 */
function trimEdges(text: string): string {
  const chars = Array.from(text);
  let start = 0;
  let end = chars.length;
  while (start < end && EDGE.test(chars[start]!)) start++;
  while (end > start && EDGE.test(chars[end - 1]!)) end--;
  return chars.slice(start, end).join('');
}

/** Case-insensitive, surrounding spaces and punctuation ignored, inner spaces collapsed. */
function normalizeKeyword(text: string): string {
  return trimEdges(text.normalize('NFKC')).replace(/\s+/g, ' ').toUpperCase();
}

/** The keyword of the list that the whole text is, or null. */
export function matchKeyword(text: string, keywords: string[]): string | null {
  const normalized = normalizeKeyword(text);
  if (normalized === '') return null;
  for (const keyword of keywords) {
    if (normalizeKeyword(keyword) === normalized) return normalizeKeyword(keyword);
  }
  return null;
}

const FREE_TEXT_OPT_OUT = /\b(stop|unsubscribe|opt[\s-]?out|remove me|no more (messages|texts))\b/i;

function messageText(message: Json): string {
  const extended = asObject(message.extendedTextMessage);
  const image = asObject(message.imageMessage);
  const video = asObject(message.videoMessage);
  return str(message.conversation) ?? str(extended.text) ?? str(image.caption) ?? str(video.caption) ?? '';
}

/** The longest provider message id kept as a delivery receipt (docs/webhooks.md: identifiers are 1–256 characters). */
export const EXTERNAL_ID_MAX = 256;

const ACK_STATUS: Record<string, { status: string; event?: string }> = {
  SERVER_ACK: { status: 'sent' },
  DELIVERY_ACK: { status: 'delivered', event: 'message.delivered' },
  READ: { status: 'read', event: 'message.read' },
  PLAYED: { status: 'played', event: 'message.read' },
  ERROR: { status: 'failed', event: 'message.failed' },
};

const compact = (fields: Record<string, string | boolean | undefined>): Record<string, string | boolean> =>
  Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined)) as Record<string, string | boolean>;

/**
 * Maps one Evolution API v2 webhook envelope to the gateway's events (spec 6.3), the opt-out facts
 * it carries and the projection changes it implies. Pure: the same envelope and context always
 * give the same result, so a replay emits the same events.
 */
export function mapInstanceEvent(envelope: Json, ctx: MapContext): Mapped {
  const out: Mapped = { events: [], facts: [], calls: [], inbound: [], receipts: [] };
  const emit = (event: string, fields: Record<string, string | boolean | undefined> = {}) => out.events.push({ event, fields: compact(fields) });
  const event = String(envelope.event ?? '').toLowerCase().replace(/_/g, '.');
  const data = envelope.data;

  switch (event) {
    case 'messages.upsert': {
      for (const item of asList(data)) {
        const key = asObject(item.key);
        if (key.fromMe === true) continue;
        const remoteJid = str(key.remoteJid);
        const chat = parseJid(remoteJid);
        const text = messageText(asObject(item.message));
        const externalId = str(key.id);
        if (chat?.kind === 'group') {
          const sender = phoneOfJid(key.participant) ?? phoneOfJid(key.participantAlt);
          emit('group.message_received', { group_id: chat.id, from: sender, message_text: text, external_message_id: externalId });
          out.inbound.push({ eventIndex: out.events.length - 1, chat: 'group', sender, groupId: chat.id, text, messageType: str(item.messageType), externalId, optAction: null });
          continue;
        }
        // A linked id (@lid) hides the number; Evolution adds the phone JID as remoteJidAlt when it knows it.
        const from = chat?.kind === 'user' ? chat.phone : chat?.kind === 'lid' ? phoneOfJid(key.remoteJidAlt) : undefined;
        if (!from) continue;
        emit('message.received', { from, message_text: text, message_type: str(item.messageType), external_message_id: externalId });
        const eventIndex = out.events.length - 1;
        const optOut = matchKeyword(text, ctx.optOutKeywords);
        const optIn = optOut ? null : matchKeyword(text, ctx.optInKeywords);
        const optAction = optOut ? 'opt_out' : optIn ? 'opt_in' : FREE_TEXT_OPT_OUT.test(text) ? 'flagged' : null;
        out.inbound.push({ eventIndex, chat: 'direct', sender: from, text, messageType: str(item.messageType), externalId, optAction });
        if (optOut) {
          out.facts.push({ kind: 'suppress', recipient: from, keyword: optOut, eventIndex });
          emit('recipient.opted_out', { from, reason: `keyword:${optOut}`, message_text: text });
        } else if (optIn) {
          out.facts.push({ kind: 'unsuppress', recipient: from, keyword: optIn, eventIndex });
        }
      }
      break;
    }
    case 'messages.update': {
      for (const item of asList(data)) {
        const rawStatus = String(item.status ?? '').toUpperCase();
        const ack = ACK_STATUS[rawStatus];
        const remoteJid = str(item.remoteJid) ?? str(asObject(item.key).remoteJid);
        const fields = { from: phoneFromJid(remoteJid), external_message_id: str(item.keyId) ?? str(asObject(item.key).id), status: ack?.status ?? (rawStatus.toLowerCase() || undefined) };
        // Provider ids are short; one past EXTERNAL_ID_MAX is no id of a message we sent (and would not fit the receipts' key).
        if (fields.external_message_id && fields.external_message_id.length <= EXTERNAL_ID_MAX && ack) out.receipts.push({ externalId: fields.external_message_id, status: ack.status });
        if (ack?.event === 'message.failed') {
          emit('message.failed', { to: fields.from ?? '', message_purpose: '', error: 'delivery_failed', external_message_id: fields.external_message_id });
        } else if (ack?.event) {
          emit(ack.event, fields);
        }
        emit('message.status_updated', fields);
      }
      break;
    }
    case 'connection.update': {
      const state = str(asObject(data).state);
      if (!state) break;
      if (state === 'open') emit('instance.connected', { connection_state: state });
      if (state === 'close') emit('instance.disconnected', { connection_state: state });
      emit('instance.connection_updated', { connection_state: state });
      out.connection = { state, qrAvailable: false };
      break;
    }
    case 'qrcode.updated': {
      emit('instance.qr_updated', { qr_available: true });
      out.connection = { state: null, qrAvailable: true };
      break;
    }
    case 'call': {
      for (const call of asList(data)) {
        const id = str(call.id);
        const status = str(call.status);
        if (!id || !status) continue;
        out.calls.push({ id, status });
        const fields = { from: phoneFromJid(str(call.from) ?? str(call.chatId)), call_status: status };
        if (status === 'offer') emit('call.received', fields);
        else if (status === 'timeout' || status === 'reject') emit('call.missed', fields);
        else if (status === 'terminate' && !ctx.acceptedCalls.has(id)) emit('call.missed', fields);
      }
      break;
    }
    case 'groups.update':
    case 'group.update': {
      for (const group of asList(data)) if (str(group.id)) emit('group.updated', { group_id: str(group.id) });
      break;
    }
    case 'group-participants.update':
    case 'group.participants.update': {
      for (const group of asList(data)) if (str(group.id)) emit('group.updated', { group_id: str(group.id) });
      break;
    }
    case 'chats.upsert':
    case 'chats.update': {
      for (const chat of asList(data)) {
        const id = str(chat.remoteJid) ?? str(chat.id);
        if (id) emit('conversation.updated', { conversation_id: id });
      }
      break;
    }
    default:
      break;
  }
  return out;
}
