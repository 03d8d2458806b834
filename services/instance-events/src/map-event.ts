import { identityOf, parseJid, phoneOfJid, type Identity, type JidParseCache } from '@gw/evolution';
import type { WebhookEventInput, WebhookEventName } from '@gw/webhooks';
import { endTime, restrictionCode, signalOfClose, signalOfCode, type RestrictionReport } from './restriction-signals.ts';

/** The fields of an event of the customer webhook contract beyond the base ones (the stage adds those). */
export type EventFields<E extends WebhookEventName> = Omit<WebhookEventInput<E>, 'event' | 'instance_id' | 'instance_name' | 'timestamp'>;

/**
 * A gateway event of the customer webhook contract (spec 6.3): its name and extra fields, typed
 * at the mapper's emit (EventFields); the stage builds the body with buildWebhookEvent.
 */
export interface GatewayEvent {
  event: WebhookEventName;
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

/** A linked id (canonical `<digits>@lid`) the manager showed together with the phone (E.164) behind it. */
export interface IdentityLink {
  lid: string;
  phone: string;
}

export interface Mapped {
  events: GatewayEvent[];
  facts: OptFact[];
  /** Every lid/phone pair the envelope's items showed, once each, in order. */
  links: IdentityLink[];
  /**
   * The connection projection's new values, when the event reports them. `reportedAt`: when the
   * manager says it happened (the envelope's date_time), to order reports that arrive out of order.
   */
  connection?: { state: string | null; qrAvailable: boolean; reportedAt: number | null };
  /** Calls seen, for the accepted-call projection. */
  calls: Array<{ id: string; status: string }>;
  /** Received messages, for the inbound log; free-text opt-out requests are flagged there for review. */
  inbound: InboundMessage[];
  /** The manager's delivery reports (delivered, read, …) by provider message id, for the message timeline. */
  receipts: Array<{ externalId: string; status: string }>;
  /** The chat network's restriction signals the envelope carries, for the number guard (restriction-signals.ts). */
  restrictions: RestrictionReport[];
}

export interface MapContext {
  optOutKeywords: string[];
  optInKeywords: string[];
  /** Ids of the calls known to have been accepted (a terminate of one is not missed). */
  acceptedCalls: ReadonlySet<string>;
  /** The stage's cache of parsed JID numbers (the same mapping without it). */
  jids?: JidParseCache;
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

const ACK_STATUS: Record<string, { status: string; event?: 'message.delivered' | 'message.read' | 'message.failed' }> = {
  SERVER_ACK: { status: 'sent' },
  DELIVERY_ACK: { status: 'delivered', event: 'message.delivered' },
  READ: { status: 'read', event: 'message.read' },
  PLAYED: { status: 'played', event: 'message.read' },
  ERROR: { status: 'failed', event: 'message.failed' },
};

/**
 * When the manager says the event happened: the envelope's `date_time`, in ms, or null when absent
 * or not a date. Evolution stamps it once in sendDataWebhook (src/api/services/channel.service.ts,
 * l.434-450 in 2.3.6, l.435-457 in 2.3.7 and 2.4.0-rc2), before the post, and every retry of
 * webhook.controller.ts retryWebhookRequest posts the same body: a late retry keeps its old time.
 * It is the server's local wall clock written with a "Z", so it only orders reports of one manager
 * among themselves (never compared with our clock).
 */
export function reportedAt(envelope: Json): number | null {
  const value = envelope.date_time;
  if (typeof value !== 'string' || value.length > 40 || !/^\d{4}-\d{2}-\d{2}T/.test(value)) return null;
  const at = Date.parse(value);
  return Number.isFinite(at) ? at : null;
}

/** Evolution's `qrcode.updated` without a QR: the limit of QR codes was reached (whatsapp.baileys.service.ts l.311 in 2.3.6). */
const QR_LIMIT = /limit/i;

const compact = (fields: Record<string, string | boolean | undefined>): Record<string, string | boolean> =>
  Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined)) as Record<string, string | boolean>;

/**
 * Maps one Evolution API v2 webhook envelope to the gateway's events (spec 6.3), the opt-out facts
 * it carries and the projection changes it implies. Pure: the same envelope and context always
 * give the same result, so a replay emits the same events.
 */
export function mapInstanceEvent(envelope: Json, ctx: MapContext): Mapped {
  const out: Mapped = { events: [], facts: [], links: [], calls: [], inbound: [], receipts: [], restrictions: [] };
  const emit = <E extends WebhookEventName>(event: E, fields: EventFields<E>) => out.events.push({ event, fields: compact(fields as Record<string, string | boolean | undefined>) });
  /** Keeps each lid/phone pair an item shows, once (even from an item that becomes no event). */
  const link = (who: Identity) => {
    if (!who.lid || !who.phone || out.links.some((l) => l.lid === who.lid && l.phone === who.phone)) return;
    out.links.push({ lid: who.lid, phone: who.phone });
  };
  const event = String(envelope.event ?? '').toLowerCase().replace(/_/g, '.');
  const data = envelope.data;

  switch (event) {
    case 'messages.upsert': {
      for (const item of asList(data)) {
        const key = asObject(item.key);
        const chat = parseJid(str(key.remoteJid), ctx.jids);
        if (chat?.kind === 'group') {
          const who = identityOf([key.participant, key.participantAlt, key.participantPn, key.participantLid], ctx.jids);
          link(who);
          if (key.fromMe === true) continue;
          const text = messageText(asObject(item.message));
          const externalId = str(key.id);
          const sender = who.phone ?? who.lid;
          emit('group.message_received', { group_id: chat.id, from: sender, from_lid: who.lid, message_text: text, external_message_id: externalId });
          out.inbound.push({ eventIndex: out.events.length - 1, chat: 'group', sender, groupId: chat.id, text, messageType: str(item.messageType), externalId, optAction: null });
          continue;
        }
        // A direct chat is a phone JID or a linked id (@lid); broadcasts and newsletters are no sender.
        if (chat?.kind !== 'user' && chat?.kind !== 'lid') continue;
        // The phone and the lid, wherever this version put them (libs/evolution/src/identity.ts).
        const who = identityOf([key.remoteJid, key.remoteJidAlt, key.senderPn, key.senderLid], ctx.jids);
        link(who);
        if (key.fromMe === true) continue;
        // The phone when the manager knows it, else the lid: a lid-only sender is kept (and can opt out).
        const from = who.phone ?? who.lid;
        if (!from) continue;
        const text = messageText(asObject(item.message));
        const externalId = str(key.id);
        emit('message.received', { from, from_lid: who.lid, message_text: text, message_type: str(item.messageType), external_message_id: externalId });
        const eventIndex = out.events.length - 1;
        const optOut = matchKeyword(text, ctx.optOutKeywords);
        const optIn = optOut ? null : matchKeyword(text, ctx.optInKeywords);
        const optAction = optOut ? 'opt_out' : optIn ? 'opt_in' : FREE_TEXT_OPT_OUT.test(text) ? 'flagged' : null;
        out.inbound.push({ eventIndex, chat: 'direct', sender: from, text, messageType: str(item.messageType), externalId, optAction });
        if (optOut) {
          out.facts.push({ kind: 'suppress', recipient: from, keyword: optOut, eventIndex });
          emit('recipient.opted_out', { from, from_lid: who.lid, reason: `keyword:${optOut}`, message_text: text });
        } else if (optIn) {
          out.facts.push({ kind: 'unsuppress', recipient: from, keyword: optIn, eventIndex });
        }
      }
      break;
    }
    case 'messages.update': {
      for (const item of asList(data)) {
        const key = asObject(item.key);
        const who = identityOf([item.remoteJid, key.remoteJid, item.remoteJidAlt, key.remoteJidAlt], ctx.jids);
        // Only a message we sent has a delivery report: Evolution also posts READ (and DELETED)
        // updates of messages the business's own phone received and read (fromMe false;
        // whatsapp.baileys.service.ts messages.update, l.1428-1551 in 2.3.6; evolution-api issue #2010).
        link(who);
        if ((item.fromMe ?? key.fromMe) !== true) continue;
        const rawStatus = String(item.status ?? '').toUpperCase();
        const ack = ACK_STATUS[rawStatus];
        // 2.3.6 names any status it cannot render "DELETED" (status[update.status] ?? 'DELETED'; a real
        // deletion is posted as messages.delete): no report of ours, so no event.
        if (!ack && rawStatus !== 'PENDING') continue;
        const fields = { from: who.phone ?? who.lid, from_lid: who.lid, external_message_id: str(item.keyId) ?? str(key.id), status: ack?.status ?? (rawStatus.toLowerCase() || undefined) };
        // Provider ids are short; one past EXTERNAL_ID_MAX is no id of a message we sent (and would not fit the receipts' key).
        if (fields.external_message_id && fields.external_message_id.length <= EXTERNAL_ID_MAX && ack) out.receipts.push({ externalId: fields.external_message_id, status: ack.status });
        const code = restrictionCode(item.messageStubParameters);
        if (code) {
          const lock = asObject(item.reachoutTimeLock);
          out.restrictions.push({ signal: signalOfCode(code), code, until: endTime(item.timeEnforcementEnds ?? lock.timeEnforcementEnds), externalMessageId: fields.external_message_id, ourSendOnly: false, ref: fields.external_message_id });
        } else if (ack?.event === 'message.failed') {
          // What Evolution posts for a refused send (the code dropped): a possible restriction, if the send is ours.
          out.restrictions.push({ signal: 'send_error', code: null, until: null, externalMessageId: fields.external_message_id, ourSendOnly: true, ref: fields.external_message_id });
        }
        if (ack?.event === 'message.failed') {
          // `to` and `message_purpose` are placeholders: the stage tells them from its own projection
          // of our sends (instance_sent_messages), and a report of a message not ours is no message.failed.
          emit('message.failed', { to: who.phone ?? who.lid ?? '', message_purpose: '', error: 'delivery_failed', external_message_id: fields.external_message_id });
        } else if (ack?.event) {
          emit(ack.event, fields);
        }
        emit('message.status_updated', fields);
      }
      break;
    }
    case 'connection.update': {
      const body = asObject(data);
      const state = str(body.state);
      if (!state) break;
      const closeSignal = state === 'close' ? signalOfClose(body.statusReason) : null;
      if (closeSignal) out.restrictions.push({ signal: closeSignal, code: String(body.statusReason), until: null, ourSendOnly: false, ref: str(envelope.date_time) });
      // Newer Baileys put the reachout timelock on connection.update; no Evolution version forwards it yet.
      const lock = asObject(body.reachoutTimeLock);
      if (lock.isActive === true) out.restrictions.push({ signal: 'reachout_timelock', code: '463', until: endTime(lock.timeEnforcementEnds), ourSendOnly: false, ref: str(envelope.date_time) });
      if (state === 'open') emit('instance.connected', { connection_state: state });
      // 'refused': the manager gave up pairing (the QR limit, below) and logs the session out.
      if (state === 'close' || state === 'refused') emit('instance.disconnected', { connection_state: state });
      emit('instance.connection_updated', { connection_state: state });
      // After 'refused' the manager's monitor logs out and sets the state to close
      // (src/api/services/monitor.service.ts 'no.connection', l.392-399 in 2.3.6): keep that.
      out.connection = { state: state === 'refused' ? 'close' : state, qrAvailable: false, reportedAt: reportedAt(envelope) };
      break;
    }
    case 'qrcode.updated': {
      // A QR is an object data.qrcode {code, base64, pairingCode}. Without one the manager reports
      // that no QR will come: at QRCODE.LIMIT it posts {message: 'QR code limit reached, please
      // login again', statusCode: 500} (whatsapp.baileys.service.ts l.309-312 in 2.3.6), then a
      // connection.update 'refused', and ends the session.
      const body = asObject(data);
      if (typeof body.qrcode === 'object' && body.qrcode !== null) {
        emit('instance.qr_updated', { qr_available: true });
        out.connection = { state: null, qrAvailable: true, reportedAt: reportedAt(envelope) };
      } else {
        const reason = QR_LIMIT.test(str(body.message) ?? '') ? 'qr_code_limit_reached' : 'no_qr_code';
        emit('instance.qr_updated', { qr_available: false, reason });
        out.connection = { state: null, qrAvailable: false, reportedAt: reportedAt(envelope) };
      }
      break;
    }
    case 'call': {
      for (const call of asList(data)) {
        const id = str(call.id);
        const status = str(call.status);
        if (!id || !status) continue;
        // Baileys WACallEvent: `from` the caller, `chatId` the chat, either may be a lid; callerPn
        // in newer Baileys; Evolution swaps a lid `from` for the phone only when it replies to calls.
        const who = identityOf([call.from, call.callerPn, call.chatId], ctx.jids);
        link(who);
        out.calls.push({ id, status });
        const fields = { from: who.phone ?? who.lid, from_lid: who.lid, call_status: status };
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
      // The chat is remoteJid; data[].id is the manager's database row id (envelope.ts).
      for (const chat of asList(data)) {
        const id = str(chat.remoteJid);
        if (id) emit('conversation.updated', { conversation_id: id });
      }
      break;
    }
    default:
      break;
  }
  return out;
}
