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
  /** Evolution's per-instance webhook (`POST /webhook/set`, or `webhook` at `/instance/create`). */
  webhook: WebhookConfig | null;
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
  /** How long the instance showed "composing" before sending (sendText `delay`); absent when it did not type. */
  typing_ms?: number;
}

/**
 * Evolution's per-instance webhook row (Prisma `Webhook`): what `/webhook/find` answers.
 * `events` holds Evolution's upper-case names (`MESSAGES_UPSERT`...).
 */
export interface WebhookConfig {
  id: string;
  url: string;
  headers: Record<string, string> | null;
  enabled: boolean;
  events: string[];
  webhookByEvents: boolean;
  webhookBase64: boolean;
  createdAt: Date;
  updatedAt: Date;
  instanceId: string;
}

/** Evolution's message statuses (wa.types StatusMessage, from Baileys' WebMessageInfo.Status). */
export type MessageStatus = 'ERROR' | 'PENDING' | 'SERVER_ACK' | 'DELIVERY_ACK' | 'READ' | 'PLAYED';

/**
 * sendText faults:
 * `unknown_number`, `timeout`, `error_5xx`: the sendText call fails / answers late.
 * `disconnect`: the next send finds the phone unlinked: the instance drops to `close`
 * (connection.update) and the send answers 400 Connection Closed.
 * `ack_error`: the send is accepted (201, send.message) but the message ends in status ERROR.
 * `stall`: a slow manager: the send is carried out after `delay_ms`, whether or not the client
 * is still there (real Evolution goes on with a request its client abandoned).
 * `hang_unsent`: waits `delay_ms`; a client that left meanwhile leaves no trace. Not a real
 * Evolution behaviour: a send that certainly never happened, for tests.
 *
 * findMessages faults (`find_*`, a separate rule slot, so they never meet sendText):
 * `find_error_5xx`: 500; `find_timeout`: the answer comes after `delay_ms`.
 */
export type FaultMode =
  | 'none'
  | 'unknown_number'
  | 'timeout'
  | 'error_5xx'
  | 'disconnect'
  | 'ack_error'
  | 'stall'
  | 'hang_unsent'
  | 'find_error_5xx'
  | 'find_timeout';

/** The Evolution route a fault mode acts on. */
export type FaultTarget = 'sendText' | 'findMessages';

export interface FaultRule {
  /** Instance it applies to; undefined means every instance. */
  instance?: string;
  mode: FaultMode;
  /** Sends still to be affected; undefined means unlimited. */
  remaining?: number;
  delay_ms: number;
}

/**
 * Delays, counted from the send.message of an accepted send, after which the message
 * becomes SERVER_ACK, DELIVERY_ACK and READ (each a messages.update). `null` stops the
 * progression at the previous step (e.g. `readMs: null`: delivered, never read).
 */
export interface AckDelays {
  serverAckMs?: number | null;
  deliveryMs?: number | null;
  readMs?: number | null;
}

export interface ResolvedAckDelays {
  serverAckMs: number | null;
  deliveryMs: number | null;
  readMs: number | null;
}

/** Webhook retry policy (Evolution 2.3: WEBHOOK_RETRY_* env; the simulator's defaults are small). */
export interface WebhookRetryOptions {
  /** Attempts in all, the first included. Default 10, as Evolution (WEBHOOK_RETRY_MAX_ATTEMPTS). */
  maxAttempts?: number;
  /** Delay before the first retry; doubles each retry, never below it (Evolution: 5 s). Default 100 ms. */
  initialDelayMs?: number;
  /** Cap of one backoff delay. Default 2000 ms. */
  maxDelayMs?: number;
  /** Per-attempt request timeout. Default 5000 ms. */
  timeoutMs?: number;
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
  /** Defaults 50 / 150 / 300 ms; changeable at run time with `PUT /sim/acks`. */
  ackDelays?: AckDelays;
  webhookRetry?: WebhookRetryOptions;
  /** `server_url` of the webhook envelope (Evolution's SERVER_URL). Default: the listening address. */
  serverUrl?: string;
  /** Put the instance token in the envelope's `apikey` (Evolution's AUTHENTICATION_EXPOSE_IN_FETCH_INSTANCES). Default true. */
  exposeApiKeyInWebhook?: boolean;
  /**
   * Embed the global key in the phone page so its buttons work without typing it; only ever
   * for requests from a loopback address. Default false (the page asks for the key).
   */
  pageKeyInline?: boolean;
  /**
   * How long `/instance/create` with `qrcode: true` waits before answering: Evolution connects and
   * then `await delay(5000)` (instance.controller.ts createInstance, 2.3.6 and 2.4.0-rc2). Default 5000.
   */
  createQrDelayMs?: number;
  /**
   * After `/instance/logout` answers, how long until the instance reaches `close`: 2.3.x does not
   * await logoutInstance (instance.controller.ts logout); the close comes with Baileys' socket
   * close (whatsapp.baileys.service.ts connectionUpdate). Default 250.
   */
  logoutCloseDelayMs?: number;
  /** Start unlicensed: business routes answer 503 LICENSE_REQUIRED (2.4.0-rc2 src/licensing/runtime.ts gateMiddleware). Default false; `PUT /sim/license`. */
  licenseRequired?: boolean;
  /**
   * Evolution's DATABASE_SAVE_DATA_NEW_MESSAGE: keep sent and received messages in the store that
   * POST /chat/findMessages reads. Default false, as Evolution's env.config.ts (unset is off).
   */
  saveNewMessages?: boolean;
  /** The Evolution release whose webhook payloads are reproduced (SIM_EVOLUTION_VERSION). Default 2.3.7. */
  evolutionVersion?: import('./evolution-version.ts').EvolutionVersion;
}

export interface ResolvedOptions {
  globalApiKey: string;
  unknownNumberPrefixes: string[];
  logger: boolean;
  logLevel: string;
  honourSendDelay: boolean;
  ackDelays: ResolvedAckDelays;
  webhookRetry: Required<WebhookRetryOptions>;
  serverUrl: string | undefined;
  exposeApiKeyInWebhook: boolean;
  pageKeyInline: boolean;
  createQrDelayMs: number;
  logoutCloseDelayMs: number;
  licenseRequired: boolean;
  saveNewMessages: boolean;
  evolutionVersion: import('./evolution-version.ts').EvolutionVersion;
}
