import type { SimEvents } from './sim-events.ts';
import type { ResolvedOptions, SimInstance } from './types.ts';
import { pathEventName, subscribes } from './webhook-config.ts';
import type { WebhookDispatcher } from './webhook-dispatcher.ts';

// Turns simulator events into Evolution v2 webhook events: the data each Baileys handler
// of whatsapp.baileys.service.ts passes to sendDataWebhook, wrapped in the envelope of
// webhook.controller.ts emit(): {event, instance, data, destination, date_time, sender,
// server_url, apikey}. Every event is also kept in a log (GET /sim/events).

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
}): void {
  const { events, dispatcher, log, options, serverUrl, messageRowId } = deps;

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
        headers: Object.fromEntries(Object.entries(webhook.headers ?? {}).filter(([name]) => name !== 'jwt_key')),
        body: envelope,
      });
    }
  };

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
    } else {
      emit(instance, 'connection.update', { ...base, state: instance.state, statusReason });
    }
  });

  events.on('send.message', (instance, _entry, response) => {
    emit(instance, 'send.message', response);
  });

  events.on('message.status', (instance, entry, status) => {
    emit(instance, 'messages.update', {
      messageId: messageRowId(entry.id),
      keyId: entry.id,
      remoteJid: entry.remote_jid,
      fromMe: true,
      participant: entry.remote_jid,
      status,
      instanceId: instance.instanceId,
    });
  });

  events.on('message.inbound', (instance, message) => {
    emit(instance, 'messages.upsert', {
      key: {
        remoteJid: message.remote_jid,
        fromMe: false,
        id: message.id,
        ...(message.participant ? { participant: message.participant } : {}),
      },
      pushName: message.push_name,
      status: 'DELIVERY_ACK',
      message: { conversation: message.text },
      messageType: 'conversation',
      messageTimestamp: message.timestamp,
      instanceId: instance.instanceId,
      source: 'android',
    });
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
