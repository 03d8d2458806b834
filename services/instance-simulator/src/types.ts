// Shared shapes of the simulator. Field names follow Evolution API v2 where the
// value is exposed over HTTP, so routes can return them without renaming.

/** Evolution's connection states (Baileys `connection.update`). */
export type ConnectionState = 'open' | 'close' | 'connecting';

/** Evolution's `integration` values (src/api/types/wa.types.ts `Integration`). */
export const INTEGRATIONS = ['WHATSAPP-BAILEYS', 'WHATSAPP-BUSINESS', 'EVOLUTION'] as const;
export type Integration = (typeof INTEGRATIONS)[number];

/** The QR payload Evolution keeps per instance (`wa.QrCode`); `base64` comes with the PNG issue. */
export interface QrCode {
  pairingCode: string | null;
  code: string;
  base64?: string;
  count: number;
}

export interface SimInstance {
  instanceId: string;
  instanceName: string;
  /** The per-instance api key (`hash` in the create response, `token` in fetchInstances). */
  token: string;
  integration: Integration;
  /** Number given at creation (used for pairing codes and as the owner number). */
  number: string | null;
  state: ConnectionState;
  /** Set once paired, like Evolution's `ownerJid`. */
  ownerJid: string | null;
  profileName: string | null;
  qrCode: QrCode | null;
  /** Seam for the webhook issue: where events of this instance will be posted. */
  webhookUrl: string | null;
  settings: InstanceSettings;
  createdAt: Date;
  updatedAt: Date;
  disconnectionAt: Date | null;
}

/** `wa.LocalSettings` as echoed by /instance/create. */
export interface InstanceSettings {
  rejectCall: boolean;
  msgCall: string;
  groupsIgnore: boolean;
  alwaysOnline: boolean;
  readMessages: boolean;
  readStatus: boolean;
  syncFullHistory: boolean;
}

/** One message the simulator accepted for sending: the proof of "sent once". */
export interface LedgerEntry {
  id: string;
  instance: string;
  /** The number exactly as the client sent it. */
  number: string;
  remote_jid: string;
  text: string;
  received_at: string;
}

export type FaultMode = 'none' | 'unknown_number' | 'timeout' | 'error_5xx';

export interface FaultRule {
  /** Instance it applies to; undefined means every instance. */
  instance?: string;
  mode: FaultMode;
  /** Sends still to be affected; undefined means unlimited. */
  remaining?: number;
  delay_ms: number;
}

/** Placeholder for the acks issue: delays after which a sent message becomes delivered / read. */
export interface AckDelays {
  serverAckMs?: number;
  deliveryMs?: number;
  readMs?: number;
}

export interface SimulatorOptions {
  /** The `AUTHENTICATION_API_KEY` of Evolution. Default `sim-global-key`. */
  globalApiKey?: string;
  /** Numbers starting with one of these (as sent, or digits only) are "not on WhatsApp". Default `['+999', '999']`. */
  unknownNumberPrefixes?: string[];
  /** Fastify/pino logging; JSON logs with the apikey header redacted. Default off. */
  logger?: boolean;
  logLevel?: string;
  /** Honour the `delay` (typing time, ms) of sendText like Evolution does. Default true. */
  honourSendDelay?: boolean;
  /** Not used yet: see AckDelays. */
  ackDelays?: AckDelays;
}

export interface ResolvedOptions {
  globalApiKey: string;
  unknownNumberPrefixes: string[];
  logger: boolean;
  logLevel: string;
  honourSendDelay: boolean;
  ackDelays: AckDelays;
}
