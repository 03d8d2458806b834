import { newMessageRowId } from './ids.ts';
import { upsertMessage } from './inbound-payloads.ts';
import { isGroupJid } from './jid.ts';
import type { InboundMessage, SendTextResponse, SimEvents } from './sim-events.ts';
import type { MessageStatus, SimInstance } from './types.ts';

// Evolution's `Message` table (prisma/postgresql-schema.prisma) for the simulator: one row per
// message sent (sendMessageWithTyping → prismaRepository.message.create(prepareMessage(..)))
// and per message received (the messages.upsert handler), each with its `MessageUpdate` rows
// (the messages.update handler stores one per receipt). Only what fetchMessages selects is kept.
//
// Evolution writes a sent or received message only when DATABASE_SAVE_DATA_NEW_MESSAGE is 'true'
// (whatsapp.baileys.service.ts: `SAVE_DATA.NEW_MESSAGE` before message.create, ~2298 in
// sendMessageWithTyping and ~1236 in messages.upsert at 2.3.6; ~2458/~1355 at 2.3.7; ~2734/~1526
// at 2.4.0-rc2). Unset means off (src/config/env.config.ts: `=== 'true'`); its .env.example and
// Docker/swarm stack set it on. With it off, findMessages reads an empty table: 200, no records.

/** Prisma enum DeviceMessage: what Baileys' getDevice() makes of a message id. */
export const DEVICE_SOURCES = ['ios', 'android', 'web', 'unknown', 'desktop'] as const;
export type DeviceSource = (typeof DEVICE_SOURCES)[number];

export interface StoredMessageKey {
  remoteJid: string;
  fromMe: boolean;
  id: string;
  participant?: string;
}

/** A `Message` row, as fetchMessages' `select` returns it. */
export interface StoredMessage {
  /** The row id (cuid), not the WhatsApp message id (that is `key.id`). */
  id: string;
  key: StoredMessageKey;
  pushName: string | null;
  messageType: string;
  message: Record<string, unknown>;
  /** Seconds. */
  messageTimestamp: number;
  instanceId: string;
  source: DeviceSource;
  contextInfo: Record<string, unknown> | null;
  MessageUpdate: { status: MessageStatus }[];
}

/** Two days, as sendMessageWithTyping puts it in the contextInfo of a 1:1 send. */
const EPHEMERAL_SETTING_AGE_S = 172_800;

/**
 * The contextInfo sendMessageWithTyping gives a message to a person (not to a group); Baileys
 * puts it on the extendedTextMessage and prepareMessage stores it. Its exact serialisation
 * after Baileys' protobuf round trip is approximated.
 */
function directSendContextInfo(timestampS: number): Record<string, unknown> {
  return {
    mentionedJid: [],
    groupMentions: [],
    ephemeralSettingTimestamp: { low: timestampS - EPHEMERAL_SETTING_AGE_S, high: 0, unsigned: false },
    disappearingMode: { initiator: 0 },
  };
}

export class MessageStore {
  private readonly byInstanceId = new Map<string, StoredMessage[]>();
  /** WhatsApp message id (key.id) → its row, so receipts find their message. */
  private readonly byKeyId = new Map<string, StoredMessage>();
  /** key.id → row id, handed out before the row exists (send.message listeners run in any order). */
  private readonly rowIds = new Map<string, string>();
  /** SAVE_DATA.NEW_MESSAGE per instance name, where set; else the server's setting. */
  private readonly savingOf = new Map<string, boolean>();

  /** `saveNewMessages`: the server's DATABASE_SAVE_DATA_NEW_MESSAGE. */
  constructor(private saveNewMessages = false) {}

  /** Turns storing new messages on or off, for one instance (by name) or for the server. */
  setSaving(on: boolean, instanceName?: string): void {
    if (instanceName === undefined) {
      this.saveNewMessages = on;
      this.savingOf.clear();
    } else this.savingOf.set(instanceName, on);
  }

  saves(instanceName: string): boolean {
    return this.savingOf.get(instanceName) ?? this.saveNewMessages;
  }

  /** The server's setting and the instances that differ from it. */
  savingSettings(): { save_new_messages: boolean; instances: Record<string, boolean> } {
    return { save_new_messages: this.saveNewMessages, instances: Object.fromEntries(this.savingOf) };
  }

  /** Subscribe after the Evolution event wiring, so webhooks are queued first. */
  listenTo(events: SimEvents): void {
    events.on('send.message', (instance, _entry, response) => this.recordSent(instance, response));
    events.on('message.inbound', (instance, message) => this.recordInbound(instance, message));
    events.on('message.status', (_instance, entry, status) => this.byKeyId.get(entry.id)?.MessageUpdate.push({ status }));
    // Prisma's onDelete: Cascade from Instance.
    events.on('instance.delete', (instance) => this.drop(instance.instanceId));
  }

  /** The row id of the message whose key.id is `keyId` (stable, whoever asks first). */
  rowIdFor(keyId: string): string {
    let rowId = this.rowIds.get(keyId);
    if (!rowId) {
      rowId = newMessageRowId();
      this.rowIds.set(keyId, rowId);
    }
    return rowId;
  }

  /** The instance's rows in storage order: the live rows, to read only (copy what leaves the simulator). */
  rows(instanceId: string): readonly StoredMessage[] {
    return this.byInstanceId.get(instanceId) ?? [];
  }

  private recordSent(instance: SimInstance, response: SendTextResponse): void {
    const { key, messageTimestamp } = response;
    this.add(instance, {
      id: this.rowIdFor(key.id),
      key: { remoteJid: key.remoteJid, fromMe: true, id: key.id },
      // prepareMessage: a message of ours without a pushName is stored as 'Você'.
      pushName: response.pushName ?? 'Você',
      messageType: response.messageType,
      message: { ...response.message },
      messageTimestamp,
      instanceId: instance.instanceId,
      source: 'web',
      contextInfo: isGroupJid(key.remoteJid) ? null : directSendContextInfo(messageTimestamp),
      MessageUpdate: [],
    });
  }

  /**
   * The row as messages.upsert stores it: `prepareMessage(received)` as is (an image keeps its
   * imageMessage with the caption), created before base64 is added for the webhook
   * (whatsapp.baileys.service.ts `message.create({ data: messageRaw })`: l.1237 at 2.3.6, l.1358
   * at 2.3.7, l.1529 at 2.4.0-rc2; `webhookBase64` comes after, l.1319 / l.1445 / l.1616).
   */
  private recordInbound(instance: SimInstance, message: InboundMessage): void {
    const { message: content, messageType } = upsertMessage(message, false);
    this.add(instance, {
      id: this.rowIdFor(message.id),
      key: {
        remoteJid: message.remote_jid,
        fromMe: false,
        id: message.id,
        ...(message.participant ? { participant: message.participant } : {}),
      },
      pushName: message.push_name,
      messageType,
      message: content,
      messageTimestamp: message.timestamp,
      instanceId: instance.instanceId,
      // 32-character ids read as Android (phone.ts newInboundMessageId).
      source: 'android',
      contextInfo: null,
      MessageUpdate: [],
    });
  }

  private add(instance: SimInstance, row: StoredMessage): void {
    if (!this.saves(instance.instanceName)) return;
    let rows = this.byInstanceId.get(instance.instanceId);
    if (!rows) {
      rows = [];
      this.byInstanceId.set(instance.instanceId, rows);
    }
    rows.push(row);
    this.byKeyId.set(row.key.id, row);
  }

  private drop(instanceId: string): void {
    for (const row of this.byInstanceId.get(instanceId) ?? []) {
      this.byKeyId.delete(row.key.id);
      this.rowIds.delete(row.key.id);
    }
    this.byInstanceId.delete(instanceId);
  }
}
