import { randomBytes } from 'node:crypto';
import { newChatRowId } from './ids.ts';
import { createJid, isLidJid, lidJid } from './jid.ts';
import type { CallStatus, InboundContent, InboundMessage, SimCall, SimEvents, SimGroup } from './sim-events.ts';
import type { SimInstance } from './types.ts';

// The other side of the line: contacts and groups that write to, call and change groups
// around a connected instance. Each action emits what Baileys would report, through the
// event seam, and is kept so the phone page can show it.

/** Baileys getDevice() reads 32-character ids as Android: the device the contacts "use". */
function newInboundMessageId(): string {
  return randomBytes(16).toString('hex').toUpperCase();
}

function newCallId(): string {
  return randomBytes(16).toString('hex').toUpperCase();
}

export function groupJid(groupId: string): string {
  const trimmed = groupId.trim();
  return trimmed.endsWith('@g.us') ? trimmed : `${trimmed.replace(/@.*$/, '')}@g.us`;
}

/**
 * Who writes or calls: a phone number (`from`), a LID (`lid`: WhatsApp's privacy id, Baileys 7
 * addresses such senders as `<lid>@lid`), or both (the LID-addressed sender whose number
 * WhatsApp also gave: key.remoteJidAlt / participantAlt).
 */
export interface SenderInput {
  from?: string;
  lid?: string;
}

export interface InboundInput extends SenderInput {
  content: InboundContent;
  pushName?: string;
}

/** The jid Baileys addresses the sender by, and its alternative. */
function senderIds(input: SenderInput): { jid: string; alt: string | null; mode: 'pn' | 'lid' } {
  const phone = input.from ? createJid(input.from) : null;
  if (input.lid) return { jid: lidJid(input.lid), alt: phone, mode: 'lid' };
  if (!phone) throw new Error('a sender needs a number or a lid');
  return { jid: phone, alt: null, mode: isLidJid(phone) ? 'lid' : 'pn' };
}

function contentText(content: InboundContent): string {
  return content.type === 'imageMessage' ? (content.caption ?? '') : content.text;
}

export interface CallInput extends SenderInput {
  missed: boolean;
  /** Overrides `missed`: how the call ends. */
  outcome?: 'accept' | 'timeout' | 'reject';
  isVideo?: boolean;
  /** How long it rings before the outcome. */
  ringMs?: number;
  /** How long an accepted call lasts before `terminate`. */
  talkMs?: number;
}

export const DEFAULT_RING_MS = 100;
export const DEFAULT_TALK_MS = 100;

interface PhoneChat {
  /** The Chat row's cuid (chats.upsert data[].id when Evolution renames it). */
  rowId: string;
  name: string | null;
  unread: number;
}

interface InstancePhoneState {
  inbound: InboundMessage[];
  chats: Map<string, PhoneChat>;
  groups: Map<string, SimGroup>;
  calls: SimCall[];
}

export class Phone {
  private readonly byInstance = new Map<string, InstancePhoneState>();
  private readonly timers = new Set<NodeJS.Timeout>();

  constructor(private readonly events: SimEvents) {
    events.on('instance.delete', (instance) => this.byInstance.delete(instance.instanceName));
    // Outgoing messages open chats too, so a later reply is a chats.update.
    events.on('send.message', (instance, entry) => {
      const state = this.state(instance);
      if (!state.chats.has(entry.remote_jid)) state.chats.set(entry.remote_jid, { rowId: newChatRowId(), name: null, unread: 0 });
    });
  }

  inboundMessages(instance: string): InboundMessage[] {
    return [...(this.byInstance.get(instance)?.inbound ?? [])];
  }

  calls(instance: string): SimCall[] {
    return [...(this.byInstance.get(instance)?.calls ?? [])];
  }

  clear(): void {
    this.byInstance.clear();
  }

  stop(): void {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }

  /** A contact writes to the instance's number. */
  receiveText(instance: SimInstance, input: { from: string; text: string; pushName?: string }): InboundMessage {
    return this.receive(instance, { from: input.from, content: { type: 'conversation', text: input.text }, ...(input.pushName ? { pushName: input.pushName } : {}) });
  }

  /** A contact (by number, LID or both) sends a text, an extended text or an image. */
  receive(instance: SimInstance, input: InboundInput): InboundMessage {
    const sender = senderIds(input);
    const known = this.state(instance).chats.get(sender.jid);
    // A contact keeps its push name from one message to the next unless told otherwise.
    const pushName = input.pushName ?? known?.name ?? sender.jid.split('@')[0] ?? sender.jid;
    return this.deliver(instance, {
      remote_jid: sender.jid,
      participant: null,
      addressing_mode: sender.mode,
      sender_alt: sender.alt,
      from: input.from ?? sender.jid,
      push_name: pushName,
      text: contentText(input.content),
      content: input.content,
      chatName: pushName,
    });
  }

  /** A message received earlier, by id (for reads, edits and deletes). */
  findInbound(instance: SimInstance, messageId: string): InboundMessage | undefined {
    return this.byInstance.get(instance.instanceName)?.inbound.find((message) => message.id === messageId);
  }

  /** The chat row of a jid, if the instance has that chat. */
  hasChat(instanceName: string, remoteJid: string): boolean {
    return this.byInstance.get(instanceName)?.chats.has(remoteJid) ?? false;
  }

  /** The business reads, on its own phone, a message it received: a READ receipt with fromMe false. */
  readByOwner(instance: SimInstance, message: InboundMessage): void {
    const chat = this.state(instance).chats.get(message.remote_jid);
    if (chat) chat.unread = 0;
    this.events.emit('message.read-by-owner', instance, message);
  }

  /** The contact edits a message it sent. */
  edit(instance: SimInstance, message: InboundMessage, text: string): void {
    message.text = text;
    this.events.emit('message.edited', instance, { message, text, protocolId: newInboundMessageId(), timestampMs: Date.now() });
  }

  /** The contact deletes a message it sent, for everyone. */
  revoke(instance: SimInstance, message: InboundMessage): void {
    this.events.emit('message.revoked', instance, { message, protocolId: newInboundMessageId(), timestampMs: Date.now() });
  }

  /** A member writes in a group the instance belongs to. */
  receiveGroupText(
    instance: SimInstance,
    input: { groupId: string; participant?: string; participantLid?: string; text: string; pushName?: string },
  ): InboundMessage {
    const sender = senderIds({ ...(input.participant ? { from: input.participant } : {}), ...(input.participantLid ? { lid: input.participantLid } : {}) });
    const participant = sender.jid;
    const group = this.ensureGroup(instance, groupJid(input.groupId), participant);
    if (!group.participants.includes(participant)) group.participants.push(participant);
    return this.deliver(instance, {
      remote_jid: group.id,
      participant,
      addressing_mode: sender.mode,
      sender_alt: sender.alt,
      from: input.participant ?? participant,
      push_name: input.pushName ?? participant.split('@')[0] ?? participant,
      text: input.text,
      content: { type: 'conversation', text: input.text },
      chatName: group.subject,
    });
  }

  /** Someone changes a group's subject (groups.update). */
  updateGroup(instance: SimInstance, input: { groupId: string; subject: string; author?: string }): SimGroup {
    const author = input.author ? createJid(input.author) : null;
    const group = this.ensureGroup(instance, groupJid(input.groupId), author);
    group.subject = input.subject;
    const chat = this.state(instance).chats.get(group.id);
    if (chat) chat.name = input.subject;
    this.events.emit('groups.update', instance, { id: group.id, subject: input.subject, author });
    return group;
  }

  updateParticipants(
    instance: SimInstance,
    input: { groupId: string; participants: string[]; action: 'add' | 'remove' | 'promote' | 'demote'; author?: string },
  ): SimGroup {
    const author = input.author ? createJid(input.author) : null;
    const group = this.ensureGroup(instance, groupJid(input.groupId), author);
    const jids = input.participants.map((participant) => createJid(participant));
    if (input.action === 'add') for (const jid of jids) if (!group.participants.includes(jid)) group.participants.push(jid);
    if (input.action === 'remove') group.participants = group.participants.filter((jid) => !jids.includes(jid));
    this.events.emit('group-participants.update', instance, {
      id: group.id,
      author,
      participants: jids,
      action: input.action,
    });
    return group;
  }

  /**
   * A contact calls: `offer` at once, then after ringMs `timeout` (missed: Baileys maps
   * <terminate reason="timeout"> to it), `reject`, or `accept` followed by `terminate`
   * after talkMs. With the instance setting rejectCall, Evolution rejects every offer.
   */
  call(instance: SimInstance, input: CallInput): SimCall {
    // Baileys reports the caller as addressed (a LID caller's from/chatId are `@lid`); Evolution
    // maps it to the number only to answer with msgCall (2.3.7 l.1891), which is not simulated.
    const from = senderIds(input).jid;
    const base: SimCall = {
      chatId: from,
      from,
      isGroup: false,
      id: newCallId(),
      date: new Date(),
      isVideo: input.isVideo ?? false,
      status: 'offer',
      offline: false,
    };
    const outcome = instance.settings.rejectCall ? 'reject' : (input.outcome ?? (input.missed ? 'timeout' : 'accept'));
    const ringMs = input.ringMs ?? DEFAULT_RING_MS;
    this.emitCall(instance, base, 'offer');
    this.later(ringMs, () => {
      this.emitCall(instance, base, outcome);
      if (outcome === 'accept') this.later(input.talkMs ?? DEFAULT_TALK_MS, () => this.emitCall(instance, base, 'terminate'));
    });
    return { ...base };
  }

  private emitCall(instance: SimInstance, base: SimCall, status: CallStatus): void {
    const call: SimCall = { ...base, status, date: new Date() };
    this.state(instance).calls.push(call);
    this.events.emit('call', instance, call);
  }

  private later(ms: number, fn: () => void): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      fn();
    }, ms);
    timer.unref();
    this.timers.add(timer);
  }

  private deliver(
    instance: SimInstance,
    input: Omit<InboundMessage, 'id' | 'instance' | 'timestamp' | 'received_at'> & { chatName: string | null },
  ): InboundMessage {
    const now = new Date();
    const { chatName, ...fields } = input;
    const message: InboundMessage = {
      id: newInboundMessageId(),
      instance: instance.instanceName,
      ...fields,
      timestamp: Math.floor(now.getTime() / 1000),
      received_at: now.toISOString(),
    };
    const state = this.state(instance);
    state.inbound.push(message);
    this.events.emit('message.inbound', instance, message);

    // Baileys reports the chat after the message: new chats as chats.upsert, known ones as chats.update.
    const chat = state.chats.get(message.remote_jid);
    if (!chat) {
      state.chats.set(message.remote_jid, { rowId: newChatRowId(), name: chatName, unread: 1 });
      this.events.emit('chats.upsert', instance, [{ remoteJid: message.remote_jid, name: chatName, unreadMessages: 1 }]);
    } else {
      chat.unread += 1;
      this.events.emit('chats.update', instance, [message.remote_jid]);
      // The messages.upsert handler renames a known 1:1 chat whose contact's push name changed
      // (2.3.6 l.1160-1173, 2.3.7 l.1178-1191): chats.upsert [{id: <Chat row cuid>, name}].
      if (!message.participant && chatName && chat.name !== chatName) {
        chat.name = chatName;
        this.events.emit('chat.renamed', instance, { id: chat.rowId, remoteJid: message.remote_jid, name: chatName });
      }
    }
    return message;
  }

  private ensureGroup(instance: SimInstance, id: string, creator: string | null): SimGroup {
    const state = this.state(instance);
    const existing = state.groups.get(id);
    if (existing) return existing;
    const owner = creator ?? instance.ownerJid ?? `${id.split('@')[0]?.split('-')[0] ?? '0'}@s.whatsapp.net`;
    const group: SimGroup = {
      id,
      subject: `Group ${id.split('@')[0]}`,
      owner,
      creation: Math.floor(Date.now() / 1000),
      participants: [...new Set([owner, ...(instance.ownerJid ? [instance.ownerJid] : [])])],
    };
    state.groups.set(id, group);
    this.events.emit('groups.upsert', instance, group);
    return group;
  }

  private state(instance: SimInstance): InstancePhoneState {
    let state = this.byInstance.get(instance.instanceName);
    if (!state) {
      state = { inbound: [], chats: new Map(), groups: new Map(), calls: [] };
      this.byInstance.set(instance.instanceName, state);
    }
    return state;
  }
}
