import { randomBytes } from 'node:crypto';
import { createJid } from './jid.ts';
import type { CallStatus, InboundMessage, SimCall, SimEvents, SimGroup } from './sim-events.ts';
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

export interface CallInput {
  from: string;
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

interface InstancePhoneState {
  inbound: InboundMessage[];
  chats: Map<string, { name: string | null; unread: number }>;
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
      if (!state.chats.has(entry.remote_jid)) state.chats.set(entry.remote_jid, { name: null, unread: 0 });
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
    const remoteJid = createJid(input.from);
    const pushName = input.pushName ?? remoteJid.split('@')[0] ?? input.from;
    return this.deliver(instance, {
      remote_jid: remoteJid,
      participant: null,
      from: input.from,
      push_name: pushName,
      text: input.text,
      chatName: pushName,
    });
  }

  /** A member writes in a group the instance belongs to. */
  receiveGroupText(
    instance: SimInstance,
    input: { groupId: string; participant: string; text: string; pushName?: string },
  ): InboundMessage {
    const participant = createJid(input.participant);
    const group = this.ensureGroup(instance, groupJid(input.groupId), participant);
    if (!group.participants.includes(participant)) group.participants.push(participant);
    return this.deliver(instance, {
      remote_jid: group.id,
      participant,
      from: input.participant,
      push_name: input.pushName ?? participant.split('@')[0] ?? input.participant,
      text: input.text,
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
    const from = createJid(input.from);
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
      state.chats.set(message.remote_jid, { name: chatName, unread: 1 });
      this.events.emit('chats.upsert', instance, [{ remoteJid: message.remote_jid, name: chatName, unreadMessages: 1 }]);
    } else {
      chat.unread += 1;
      if (!chat.name) chat.name = chatName;
      this.events.emit('chats.update', instance, [message.remote_jid]);
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
