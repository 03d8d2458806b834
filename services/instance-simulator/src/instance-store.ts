import { newInstanceId, newInstanceToken, newPairingCode, newQrCodeString } from './ids.ts';
import QRCode from 'qrcode';
import { sleep } from './sleep.ts';
import type { SimEvents } from './sim-events.ts';
import type { ConnectionState, InstanceSettings, Integration, SimInstance, WebhookConfig } from './types.ts';
import { buildWebhookConfig, type WebhookInput } from './webhook-config.ts';

/** Baileys DisconnectReason.loggedOut: the phone unlinked the device, or /instance/logout. */
export const DISCONNECT_LOGGED_OUT = 401;
/** Evolution's statusReason while nothing is wrong. */
const STATUS_OK = 200;

export interface CreateInstanceInput {
  instanceName: string;
  token?: string;
  integration: Integration;
  number?: string | null;
  webhook?: WebhookInput | null;
  settings: InstanceSettings;
}

/**
 * All instances, in memory, keyed by name (Evolution's primary handle).
 * Every state change goes through here so the event seam sees it.
 */
export class InstanceStore {
  private readonly byName = new Map<string, SimInstance>();

  constructor(private readonly events: SimEvents) {}

  has(name: string): boolean {
    return this.byName.has(name);
  }

  get(name: string): SimInstance | undefined {
    return this.byName.get(name);
  }

  list(): SimInstance[] {
    return [...this.byName.values()];
  }

  findByToken(token: string): SimInstance | undefined {
    return this.list().find((instance) => instance.token === token);
  }

  create(input: CreateInstanceInput): SimInstance {
    const now = new Date();
    const instanceId = newInstanceId();
    const instance: SimInstance = {
      instanceId,
      instanceName: input.instanceName,
      token: input.token ?? newInstanceToken(),
      integration: input.integration,
      number: input.number ?? null,
      // A fresh Evolution instance starts disconnected until /instance/connect.
      state: 'close',
      ownerJid: null,
      profileName: null,
      qrCode: null,
      webhook: input.webhook ? buildWebhookConfig(instanceId, input.webhook, null) : null,
      settings: input.settings,
      createdAt: now,
      updatedAt: now,
      disconnectionAt: null,
    };
    this.byName.set(instance.instanceName, instance);
    this.events.emit('instance.create', instance);
    return instance;
  }

  delete(name: string): SimInstance | undefined {
    const instance = this.byName.get(name);
    if (!instance) return undefined;
    this.byName.delete(name);
    this.events.emit('instance.delete', instance);
    return instance;
  }

  setWebhook(instance: SimInstance, webhook: WebhookConfig): WebhookConfig {
    instance.webhook = webhook;
    return webhook;
  }

  /**
   * Starts (or restarts) pairing: state `connecting` (Baileys reports it when the socket
   * opens), then a new QR (qrcode.updated), as Evolution's connectionUpdate sees them.
   */
  async startConnecting(instance: SimInstance, number?: string | null): Promise<SimInstance> {
    this.setState(instance, 'connecting', STATUS_OK);
    const pairingNumber = number ?? null;
    const code = newQrCodeString();
    instance.qrCode = {
      pairingCode: pairingNumber ? newPairingCode() : null,
      code,
      // As Evolution renders the Baileys QR string: a PNG data URI, margin 3, scale 4, correction H.
      base64: await QRCode.toDataURL(code, { errorCorrectionLevel: 'H', margin: 3, scale: 4 }),
      count: (instance.qrCode?.count ?? 0) + 1,
    };
    this.events.emit('qrcode.updated', instance);
    return instance;
  }

  /** What a scanned QR does: the phone's number becomes the owner, state `open`. */
  completePairing(instance: SimInstance, owner: { number?: string; profileName?: string } = {}): SimInstance {
    const number = owner.number ?? instance.number ?? defaultOwnerNumber(instance);
    instance.ownerJid = `${number.replace(/\D/g, '')}@s.whatsapp.net`;
    instance.profileName = owner.profileName ?? instance.profileName ?? instance.instanceName;
    instance.qrCode = null;
    this.setState(instance, 'open', STATUS_OK);
    return instance;
  }

  /** Logout, an unlinked phone or a `disconnect` fault: state `close` with Baileys' reason code. */
  disconnect(instance: SimInstance, statusReason = DISCONNECT_LOGGED_OUT): SimInstance {
    instance.qrCode = null;
    this.setState(instance, 'close', statusReason);
    return instance;
  }

  /**
   * A logout that completes later: `close` after `delayMs`, if the instance is still this one
   * (not deleted or re-created under its name meanwhile) and not closed already.
   */
  closeLater(instance: SimInstance, delayMs: number, shutdown: AbortSignal): void {
    void sleep(delayMs, shutdown).then(() => {
      if (shutdown.aborted || this.byName.get(instance.instanceName) !== instance || instance.state === 'close') return;
      this.disconnect(instance);
    });
  }

  private setState(instance: SimInstance, state: ConnectionState, statusReason: number): void {
    const previous = instance.state;
    instance.state = state;
    instance.updatedAt = new Date();
    if (state === 'close' && previous !== 'close') instance.disconnectionAt = instance.updatedAt;
    if (previous !== state) this.events.emit('connection.update', instance, previous, statusReason);
  }
}

/** A stable fake owner number when neither the create nor the pair call named one. */
function defaultOwnerNumber(instance: SimInstance): string {
  const digits = instance.instanceId.replace(/\D/g, '').padEnd(9, '0').slice(0, 9);
  return `5500${digits}`;
}
