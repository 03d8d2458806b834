import { DEFAULT_EVOLUTION_VERSION } from './evolution-version.ts';
import type { ResolvedAckDelays, ResolvedOptions, SimulatorOptions } from './types.ts';

/** The global key of a local run when SIM_GLOBAL_API_KEY is not set at all (well known: local use only). */
export const DEFAULT_GLOBAL_API_KEY = 'sim-global-key';
export const DEFAULT_UNKNOWN_NUMBER_PREFIXES = ['+999', '999', '1999'];
export const DEFAULT_ACK_DELAYS: ResolvedAckDelays = { serverAckMs: 50, deliveryMs: 150, readMs: 300 };
export const DEFAULT_WEBHOOK_RETRY = { maxAttempts: 10, initialDelayMs: 100, maxDelayMs: 2000, timeoutMs: 5000 };

/** Evolution's `await delay(5000)` after connecting in createInstance (qrcode: true). */
export const DEFAULT_CREATE_QR_DELAY_MS = 5000;
export const DEFAULT_LOGOUT_CLOSE_DELAY_MS = 250;

/**
 * SIM_GLOBAL_API_KEY as the simulator takes it: unset gives the local default; set but empty (or
 * blank) is refused. An empty value is what a deployment's secret left unfilled looks like: taking
 * the well-known default, or an empty key, then would open every instance to anyone.
 */
export function globalApiKeyFromEnv(value: string | undefined): string {
  if (value === undefined) return DEFAULT_GLOBAL_API_KEY;
  if (value.trim() === '') {
    throw new Error(
      'SIM_GLOBAL_API_KEY is set but empty. Give it a key (e.g. `openssl rand -hex 24`), or unset it to use the local default "sim-global-key" (local runs only).',
    );
  }
  return value;
}

export function resolveOptions(options: SimulatorOptions = {}): ResolvedOptions {
  const acks = options.ackDelays ?? {};
  if (options.globalApiKey !== undefined && options.globalApiKey.trim() === '') throw new Error('The simulator\'s globalApiKey must not be empty.');
  return {
    globalApiKey: options.globalApiKey ?? DEFAULT_GLOBAL_API_KEY,
    unknownNumberPrefixes: options.unknownNumberPrefixes ?? DEFAULT_UNKNOWN_NUMBER_PREFIXES,
    logger: options.logger ?? false,
    logLevel: options.logLevel ?? 'info',
    honourSendDelay: options.honourSendDelay ?? true,
    ackDelays: {
      serverAckMs: acks.serverAckMs === undefined ? DEFAULT_ACK_DELAYS.serverAckMs : acks.serverAckMs,
      deliveryMs: acks.deliveryMs === undefined ? DEFAULT_ACK_DELAYS.deliveryMs : acks.deliveryMs,
      readMs: acks.readMs === undefined ? DEFAULT_ACK_DELAYS.readMs : acks.readMs,
    },
    webhookRetry: { ...DEFAULT_WEBHOOK_RETRY, ...options.webhookRetry },
    serverUrl: options.serverUrl,
    exposeApiKeyInWebhook: options.exposeApiKeyInWebhook ?? true,
    pageKeyInline: options.pageKeyInline ?? false,
    createQrDelayMs: options.createQrDelayMs ?? DEFAULT_CREATE_QR_DELAY_MS,
    logoutCloseDelayMs: options.logoutCloseDelayMs ?? DEFAULT_LOGOUT_CLOSE_DELAY_MS,
    licenseRequired: options.licenseRequired ?? false,
    saveNewMessages: options.saveNewMessages ?? false,
    evolutionVersion: options.evolutionVersion ?? DEFAULT_EVOLUTION_VERSION,
  };
}
