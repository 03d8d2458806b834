export { buildSimulator, createSimulator, type Simulator } from './simulator.ts';
export { DEFAULT_GLOBAL_API_KEY, DEFAULT_UNKNOWN_NUMBER_PREFIXES } from './options.ts';
export { DEFAULT_TIMEOUT_DELAY_MS, FAULT_MODES, faultTarget, type FaultInput } from './fault-registry.ts';
export type { StoredMessage, StoredMessageKey } from './message-store.ts';
export type { MessagePage } from './message-query.ts';
export { createJid } from './jid.ts';
export type { SimContext } from './sim-context.ts';
export type { SendTextResponse, SimEventMap, SimEvents } from './sim-events.ts';
export type {
  AckDelays,
  MessageStatus,
  WebhookConfig,
  WebhookRetryOptions,
  ConnectionState,
  FaultMode,
  FaultTarget,
  FaultRule,
  Integration,
  LedgerEntry,
  QrCode,
  SimInstance,
  SimulatorOptions,
} from './types.ts';
export type { CallStatus, InboundMessage, SimCall, SimChat, SimGroup } from './sim-events.ts';
export type { EvolutionEnvelope } from './evolution-events.ts';
export type { DeliveryRecord } from './webhook-dispatcher.ts';
export { DEFAULT_ACK_DELAYS, DEFAULT_WEBHOOK_RETRY } from './options.ts';
