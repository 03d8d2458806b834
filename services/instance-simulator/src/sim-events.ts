import { EventEmitter } from 'node:events';
import type { ConnectionState, LedgerEntry, MessageStatus, SimInstance } from './types.ts';

// The seam between what happens in the simulator and who reports it: the Evolution
// webhook mapper (evolution-events.ts), the ack scheduler, the phone page... subscribe
// here instead of being called from route handlers. Names follow Evolution's webhook
// events (lower-case, dotted) where there is a one-to-one match.

export interface SimEventMap {
  'instance.create': [instance: SimInstance];
  'instance.delete': [instance: SimInstance];
  'qrcode.updated': [instance: SimInstance];
  /** `statusReason` as Evolution reports it: 200 while fine, Baileys' DisconnectReason on close. */
  'connection.update': [instance: SimInstance, previous: ConnectionState, statusReason: number];
  'send.message': [instance: SimInstance, entry: LedgerEntry, response: SendTextResponse];
  /** A sent message changed status (acks, or ERROR by fault injection). */
  'message.status': [instance: SimInstance, entry: LedgerEntry, status: MessageStatus];
  /** A message arrived from someone else (1:1 or group). */
  'message.inbound': [instance: SimInstance, message: InboundMessage];
  'chats.upsert': [instance: SimInstance, chats: SimChat[]];
  'chats.update': [instance: SimInstance, remoteJids: string[]];
  'call': [instance: SimInstance, call: SimCall];
  'groups.upsert': [instance: SimInstance, group: SimGroup];
  'groups.update': [instance: SimInstance, update: SimGroupUpdate];
  'group-participants.update': [instance: SimInstance, update: SimParticipantsUpdate];
  /** A known 1:1 chat's contact wrote under a new push name (Evolution renames the chat row). */
  'chat.renamed': [instance: SimInstance, chat: SimChatRow];
  /** The business's own phone read a message it received (a receipt on a fromMe:false message). */
  'message.read-by-owner': [instance: SimInstance, message: InboundMessage];
  /** The contact edited a message it sent earlier. */
  'message.edited': [instance: SimInstance, edit: InboundEdit];
  /** The contact deleted a message it sent earlier ("delete for everyone"). */
  'message.revoked': [instance: SimInstance, revoke: InboundRevoke];
  /** Pairing gave up: the QR was shown QRCODE_LIMIT times without a scan. */
  'qrcode.limit': [instance: SimInstance];
}

/** What a contact sent, before Evolution's prepareMessage (Baileys' message content). */
export type InboundContent =
  | { type: 'conversation'; text: string }
  | { type: 'extendedTextMessage'; text: string }
  | { type: 'imageMessage'; caption: string | null; mimetype: string; /** The image file. */ base64: string };

export interface InboundEdit {
  message: InboundMessage;
  text: string;
  /** The id of the protocol message that carries the edit. */
  protocolId: string;
  /** Milliseconds. */
  timestampMs: number;
}

export interface InboundRevoke {
  message: InboundMessage;
  protocolId: string;
  timestampMs: number;
}

/** A `Chat` row of Evolution's database: its cuid, jid and name. */
export interface SimChatRow {
  id: string;
  remoteJid: string;
  name: string | null;
}

export interface SendTextResponse {
  key: { remoteJid: string; fromMe: true; id: string };
  pushName?: string;
  status: 'PENDING';
  message: { conversation: string };
  contextInfo?: unknown;
  messageType: 'conversation';
  messageTimestamp: number;
  instanceId: string;
  source: string;
}

export interface InboundMessage {
  id: string;
  instance: string;
  /** The chat as Baileys addresses it: the sender's jid (`@s.whatsapp.net` or `@lid`), or the group's `@g.us` jid. */
  remote_jid: string;
  /** Group messages only: the jid of the member who wrote (`@lid` in LID-addressed groups). */
  participant: string | null;
  /** Baileys 7 key.addressingMode: 'lid' when the sender is addressed by its LID. */
  addressing_mode: 'pn' | 'lid';
  /** Baileys 7 key.remoteJidAlt (1:1) / key.participantAlt (group): the sender's other id, when WhatsApp gave it. */
  sender_alt: string | null;
  /** What was sent; `text` above is its text or caption. */
  content: InboundContent;
  /** The sender's number as given to the simulator. */
  from: string;
  push_name: string;
  text: string;
  /** Seconds, like Baileys' messageTimestamp. */
  timestamp: number;
  received_at: string;
}

export interface SimChat {
  remoteJid: string;
  name: string | null;
  unreadMessages: number;
}

/** Baileys' WACallUpdateType (src/Types/Call.ts), including `terminate` of newer versions. */
export type CallStatus = 'offer' | 'ringing' | 'timeout' | 'reject' | 'accept' | 'terminate';

/** Baileys' WACallEvent, which Evolution posts as the `call` event's data unchanged. */
export interface SimCall {
  chatId: string;
  from: string;
  isGroup: boolean;
  groupJid?: string;
  id: string;
  date: Date;
  isVideo: boolean;
  status: CallStatus;
  offline: boolean;
}

export interface SimGroup {
  id: string;
  subject: string;
  owner: string;
  creation: number;
  participants: string[];
}

export interface SimGroupUpdate {
  id: string;
  subject: string;
  author: string | null;
}

export interface SimParticipantsUpdate {
  id: string;
  author: string | null;
  participants: string[];
  action: 'add' | 'remove' | 'promote' | 'demote';
}

export type SimEvents = EventEmitter<SimEventMap>;

export function createSimEvents(): SimEvents {
  return new EventEmitter<SimEventMap>();
}
