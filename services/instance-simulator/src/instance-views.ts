import type { Ledger } from './ledger.ts';
import type { SimInstance } from './types.ts';

// JSON views of an instance in Evolution v2's shapes.

/** GET /instance/connectionState/{instance} */
export function connectionStateView(instance: SimInstance) {
  return { instance: { instanceName: instance.instanceName, state: instance.state } };
}

/** GET /instance/connect/{instance} while connecting: Evolution returns `instance.qrCode`. */
export function qrCodeView(instance: SimInstance) {
  const qr = instance.qrCode;
  return {
    pairingCode: qr?.pairingCode ?? null,
    code: qr?.code ?? null,
    ...(qr?.base64 !== undefined ? { base64: qr.base64 } : {}),
    count: qr?.count ?? 0,
  };
}

/**
 * One element of GET /instance/fetchInstances: Evolution returns its Prisma `Instance`
 * rows with their relations included; the relations we do not simulate are null.
 */
export function fetchInstanceView(instance: SimInstance, ledger: Ledger) {
  const messages = ledger.list(instance.instanceName);
  const chats = new Set(messages.map((message) => message.remote_jid));
  return {
    id: instance.instanceId,
    name: instance.instanceName,
    connectionStatus: instance.state,
    ownerJid: instance.ownerJid,
    profileName: instance.profileName,
    profilePicUrl: null,
    integration: instance.integration,
    number: instance.number,
    businessId: null,
    token: instance.token,
    clientName: 'evolution_exchange',
    disconnectionReasonCode: instance.disconnectionAt ? 401 : null,
    disconnectionObject: null,
    disconnectionAt: instance.disconnectionAt?.toISOString() ?? null,
    createdAt: instance.createdAt.toISOString(),
    updatedAt: instance.updatedAt.toISOString(),
    Chatwoot: null,
    Proxy: null,
    Rabbitmq: null,
    Nats: null,
    Sqs: null,
    Websocket: null,
    Setting: {
      id: `${instance.instanceId}-setting`,
      ...instance.settings,
      wavoipToken: '',
      createdAt: instance.createdAt.toISOString(),
      updatedAt: instance.updatedAt.toISOString(),
      instanceId: instance.instanceId,
    },
    _count: { Message: messages.length, Contact: chats.size, Chat: chats.size },
  };
}
