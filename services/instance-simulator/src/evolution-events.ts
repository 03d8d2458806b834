import { baileysKey, upsertKey, upsertMessage } from './inbound-payloads.ts';
import type { InboundMessage, SimEvents } from './sim-events.ts';
import type { EvolutionVersion } from './evolution-version.ts';
import type { ResolvedOptions, SimInstance } from './types.ts';
import { pathEventName, subscribes } from './webhook-config.ts';
import type { WebhookDispatcher } from './webhook-dispatcher.ts';

// Turns simulator events into Evolution v2 webhook events: the data each Baileys handler
// of whatsapp.baileys.service.ts passes to sendDataWebhook, wrapped in the envelope of
// webhook.controller.ts emit(): {event, instance, data, destination, date_time, sender,
// server_url, apikey}. Every event is also kept in a log (GET /sim/events). Payloads follow
// `options.evolutionVersion` where the releases differ (README: "Behaviour → real source").

/**
 * Baileys DisconnectReason codes after which Evolution does not reconnect, and so posts the close
 * (whatsapp.baileys.service.ts codesToNotReconnect: l.402 in 2.3.6, l.428 in 2.3.7 = [401, 403,
 * 402, 406]; l.498 in 2.4.0-rc2 adds 408, "per #2501"). 401 loggedOut and 403 forbidden are what
 * the number guard reads as logged out and banned.
 */
export function noReconnectCodes(version: EvolutionVersion): readonly number[] {
  return version === '2.4.0-rc2' ? [401, 403, 402, 406, 408] : [401, 403, 402, 406];
}
/** Baileys DisconnectReason.badSession / connectionClosed: what the QR limit posts. */
const BAD_SESSION = 500;
const CONNECTION_CLOSED = 428;
const BOOM_ERRORS: Record<number, string> = { 401: 'Unauthorized', 402: 'Payment Required', 403: 'Forbidden', 406: 'Not Acceptable', 408: 'Request Time-out' };

export interface EvolutionEnvelope {
  event: string;
  instance: string;
  data: unknown;
  destination?: string;
  date_time: string;
  sender?: string;
  server_url: string;
  apikey: string | null;
}

const KEPT_EVENTS = 2000;

/**
 * channel.service sendDataWebhook's `date_time`: local wall-clock time written as ISO
 * (`new Date(Date.now() - tzoffset).toISOString()`), so it ends in Z whatever the zone.
 */
function evolutionDateTime(): string {
  const offsetMs = new Date().getTimezoneOffset() * 60_000;
  return new Date(Date.now() - offsetMs).toISOString();
}

/** The headers 2.4.0-rc2's webhook controller adds to every post (webhook.controller.ts l.127-136). */
function trackingHeaders(instance: SimInstance, event: string): Record<string, string> {
  return {
    'X-Instance-ID': instance.instanceId,
    'X-Instance-Name': instance.instanceName,
    'X-Event-Type': event,
    'X-Timestamp': Date.now().toString(),
    'User-Agent': 'EvolutionAPI-Webhook/2.3.7',
  };
}

export class EvolutionEventLog {
  private entries: EvolutionEnvelope[] = [];

  add(envelope: EvolutionEnvelope): void {
    this.entries.push(envelope);
    if (this.entries.length > KEPT_EVENTS) this.entries.splice(0, this.entries.length - KEPT_EVENTS);
  }

  list(filter: { instance?: string; event?: string } = {}): EvolutionEnvelope[] {
    return this.entries.filter(
      (entry) =>
        (filter.instance === undefined || entry.instance === filter.instance) &&
        (filter.event === undefined || entry.event === filter.event),
    );
  }

  clear(): void {
    this.entries = [];
  }
}

export function wireEvolutionEvents(deps: {
  events: SimEvents;
  dispatcher: WebhookDispatcher;
  log: EvolutionEventLog;
  options: ResolvedOptions;
  serverUrl: () => string;
  /** Message key id → the `Message` row id Evolution reports as messageId (the message store's). */
  messageRowId: (keyId: string) => string;
  /**
   * Whether Evolution keeps messages (DATABASE_SAVE_DATA_NEW_MESSAGE): only then does messages.update
   * look the row up and carry `messageId` (2.3.7 l.1628-1652). Default: always.
   */
  storesMessages?: (instanceName: string) => boolean;
  /** Whether the instance has a Chat row for a jid (chats.upsert after messages.update, 2.3.7 l.1709-1717). */
  chatExists?: (instanceName: string, remoteJid: string) => boolean;
}): void {
  const { events, dispatcher, log, options, serverUrl, messageRowId } = deps;
  const version = options.evolutionVersion;
  const storesMessages = deps.storesMessages ?? (() => true);
  const chatExists = deps.chatExists ?? (() => false);

  const emit = (instance: SimInstance, event: string, data: unknown) => {
    const webhook = instance.webhook;
    const envelope: EvolutionEnvelope = {
      event,
      instance: instance.instanceName,
      data,
      ...(webhook ? { destination: webhook.url } : {}),
      date_time: evolutionDateTime(),
      // `sender` is the instance's wuid: unknown (so absent) until the first pairing.
      ...(instance.ownerJid ? { sender: instance.ownerJid } : {}),
      server_url: serverUrl(),
      apikey: options.exposeApiKeyInWebhook ? instance.token : null,
    };
    log.add(envelope);
    if (webhook && subscribes(webhook, event)) {
      dispatcher.enqueue({
        instance: instance.instanceName,
        event,
        url: webhook.webhookByEvents ? `${webhook.url}/${pathEventName(event)}` : webhook.url,
        // Evolution 2.3 turns a `jwt_key` header into a signed Authorization; not simulated.
        headers: {
          ...Object.fromEntries(Object.entries(webhook.headers ?? {}).filter(([name]) => name !== 'jwt_key')),
          ...(version === '2.4.0-rc2' ? trackingHeaders(instance, event) : {}),
        },
        body: envelope,
      });
    }
  };

  /**
   * The messages.update handler's data (2.3.6 ~l.1470-1551, 2.3.7 l.1610-1702): Baileys' update
   * reduced to keyId/remoteJid/fromMe/participant/status (`status[update.status] ?? 'SERVER_ACK'`;
   * messageStubParameters, e.g. a rejected send's error code, are dropped), `messageId` only when
   * messages are stored, then chats.upsert {unreadMessages: 0} when the chat exists.
   */
  const emitMessageUpdate = (
    instance: SimInstance,
    update: { keyId: string; remoteJid: string; fromMe: boolean; participant?: string | null; status: string; message?: unknown },
  ) => {
    const stored = storesMessages(instance.instanceName);
    emit(instance, 'messages.update', {
      ...(stored ? { messageId: messageRowId(update.keyId) } : {}),
      keyId: update.keyId,
      remoteJid: update.remoteJid,
      fromMe: update.fromMe,
      ...(update.participant ? { participant: update.participant } : {}),
      status: update.status,
      instanceId: instance.instanceId,
      ...(update.message !== undefined ? { message: update.message } : {}),
    });
    if (chatExists(instance.instanceName, update.remoteJid)) {
      emit(instance, 'chats.upsert', [{ remoteJid: update.remoteJid, instanceId: instance.instanceId, unreadMessages: 0 }]);
    }
  };

  /**
   * The protocolMessage of an edit or a delete, as the messages.upsert handler posts it in
   * messages.edited (2.3.6 l.1105, 2.3.7 l.1133, 2.4.0-rc2 l.1303: any protocolMessage, so a
   * delete too). Its key is the sender's view (our number, fromMe true); the enum and the 64-bit
   * timestamp are written as protobufjs' toJSON writes them (approximated).
   */
  const protocolMessage = (instance: SimInstance, message: InboundMessage, type: 'MESSAGE_EDIT' | 'REVOKE', timestampMs: number, text?: string) => ({
    key: { remoteJid: instance.ownerJid ?? message.remote_jid, fromMe: true, id: message.id },
    type,
    ...(text !== undefined ? { editedMessage: { conversation: text } } : {}),
    timestampMs: String(timestampMs),
  });

  events.on('instance.create', (instance) => {
    emit(instance, 'instance.create', { instanceName: instance.instanceName, instanceId: instance.instanceId });
  });

  events.on('instance.delete', (instance) => {
    emit(instance, 'instance.delete', { instanceName: instance.instanceName, instanceId: instance.instanceId });
  });

  events.on('qrcode.updated', (instance) => {
    emit(instance, 'qrcode.updated', {
      qrcode: {
        instance: instance.instanceName,
        pairingCode: instance.qrCode?.pairingCode ?? null,
        code: instance.qrCode?.code,
        base64: instance.qrCode?.base64,
      },
    });
  });

  events.on('connection.update', (instance, _previous, statusReason) => {
    const base = { instance: instance.instanceName };
    if (instance.state === 'open') {
      emit(instance, 'connection.update', {
        ...base,
        wuid: instance.ownerJid,
        profileName: instance.profileName,
        profilePictureUrl: null,
        state: 'open',
        statusReason,
      });
    } else if (instance.state === 'close') {
      // A reconnectable code (428, 408, 515...) makes Evolution reconnect and post no close
      // (2.3.7 l.426-430); the others post status.instance, logout.instance (monitor.service.ts
      // 'logout.instance'), then the close (l.431-463).
      if (!noReconnectCodes(version).includes(statusReason)) return;
      emit(instance, 'status.instance', {
        instance: instance.instanceName,
        status: 'closed',
        disconnectionAt: new Date().toISOString(),
        disconnectionReasonCode: statusReason,
        disconnectionObject: JSON.stringify({
          error: {
            data: null,
            isBoom: true,
            isServer: false,
            output: { statusCode: statusReason, payload: { statusCode: statusReason, error: BOOM_ERRORS[statusReason] ?? 'Unknown', message: 'Connection Failure' }, headers: {} },
          },
          date: new Date().toISOString(),
        }),
      });
      emit(instance, 'logout.instance', null);
      emit(instance, 'connection.update', { ...base, state: 'close', statusReason });
    } else {
      emit(instance, 'connection.update', { ...base, state: instance.state, statusReason });
    }
  });

  // connectionUpdate when the QR count reaches QRCODE_LIMIT (2.3.6 l.309-330, 2.3.7 l.335-356,
  // 2.4.0-rc2 l.397-418): this qrcode.updated, then a `refused` connection.update; the monitor's
  // no.connection then closes the instance without another post.
  events.on('qrcode.limit', (instance) => {
    emit(instance, 'qrcode.updated', { message: 'QR code limit reached, please login again', statusCode: BAD_SESSION });
    emit(instance, 'connection.update', {
      instance: instance.instanceName,
      state: 'refused',
      statusReason: CONNECTION_CLOSED,
      ...(instance.ownerJid ? { wuid: instance.ownerJid } : {}),
      ...(instance.profileName ? { profileName: instance.profileName } : {}),
    });
  });

  events.on('send.message', (instance, _entry, response) => {
    emit(instance, 'send.message', response);
  });

  events.on('message.status', (instance, entry, status) => {
    // A refused send is Baileys' handleBadAck (src/Socket/messages-recv.ts, 7.0.0-rc.9): key
    // {remoteJid, fromMe, id} with no participant, and {status: 0, messageStubParameters: [code]},
    // of which Evolution keeps the status only ("ERROR"); so the data has no participant either.
    const participant = status === 'ERROR' ? null : entry.remote_jid;
    emitMessageUpdate(instance, { keyId: entry.id, remoteJid: entry.remote_jid, fromMe: true, participant, status });
  });

  events.on('message.inbound', (instance, message) => {
    const base64 = Boolean(instance.webhook?.enabled && instance.webhook.webhookBase64);
    emit(instance, 'messages.upsert', {
      key: upsertKey(message, version),
      pushName: message.push_name,
      status: 'DELIVERY_ACK',
      ...upsertMessage(message, base64),
      messageTimestamp: message.timestamp,
      instanceId: instance.instanceId,
      source: 'android',
    });
  });

  // A receipt for a message we received: the business read it on its own phone.
  events.on('message.read-by-owner', (instance, message) => {
    emitMessageUpdate(instance, { keyId: message.id, remoteJid: message.remote_jid, fromMe: false, participant: message.participant, status: 'READ' });
  });

  // An edit: messages.edited (awaited in the handler), then Baileys' messages.update with no
  // status (so 'SERVER_ACK') and the new text under message.editedMessage (process-message.ts).
  events.on('message.edited', (instance, edit) => {
    emit(instance, 'messages.edited', protocolMessage(instance, edit.message, 'MESSAGE_EDIT', edit.timestampMs, edit.text));
    emitMessageUpdate(instance, {
      keyId: edit.message.id,
      remoteJid: edit.message.remote_jid,
      fromMe: false,
      participant: edit.message.participant,
      status: 'SERVER_ACK',
      message: { editedMessage: { message: { conversation: edit.text } } },
    });
  });

  // A delete for everyone: messages.edited (the REVOKE protocolMessage), then messages.delete with
  // Baileys' key; 2.3.7 and 2.4.0-rc2 add status 'DELETED' (2.3.7 l.1656), 2.3.6 posts the key
  // alone (l.1505). Evolution posts it only for a message it stored (the lookup comes first).
  events.on('message.revoked', (instance, revoke) => {
    emit(instance, 'messages.edited', protocolMessage(instance, revoke.message, 'REVOKE', revoke.timestampMs));
    if (!storesMessages(instance.instanceName)) return;
    const key = baileysKey(revoke.message);
    emit(instance, 'messages.delete', version === '2.3.6' ? key : { ...key, status: 'DELETED' });
  });

  // The chat rename of the messages.upsert handler: the Chat row as selected ({id, name}), no jid.
  events.on('chat.renamed', (instance, chat) => {
    emit(instance, 'chats.upsert', [{ id: chat.id, name: chat.name }]);
  });

  events.on('chats.upsert', (instance, chats) => {
    emit(
      instance,
      'chats.upsert',
      chats.map((chat) => ({
        remoteJid: chat.remoteJid,
        instanceId: instance.instanceId,
        name: chat.name,
        unreadMessages: chat.unreadMessages,
      })),
    );
  });

  events.on('chats.update', (instance, remoteJids) => {
    emit(
      instance,
      'chats.update',
      remoteJids.map((remoteJid) => ({ remoteJid, instanceId: instance.instanceId })),
    );
  });

  events.on('call', (instance, call) => {
    emit(instance, 'call', { ...call, date: call.date.toISOString() });
  });

  events.on('groups.upsert', (instance, group) => {
    emit(instance, 'groups.upsert', [
      {
        id: group.id,
        subject: group.subject,
        subjectOwner: group.owner,
        subjectTime: group.creation,
        size: group.participants.length,
        creation: group.creation,
        owner: group.owner,
        restrict: false,
        announce: false,
        participants: group.participants.map((id) => ({ id, admin: id === group.owner ? 'superadmin' : null })),
      },
    ]);
  });

  events.on('groups.update', (instance, update) => {
    emit(instance, 'groups.update', [{ id: update.id, subject: update.subject, author: update.author }]);
  });

  events.on('group-participants.update', (instance, update) => {
    emit(instance, 'group-participants.update', { ...update });
  });
}
