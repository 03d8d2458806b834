export { buildSimulator, createSimulator, type Simulator } from './simulator.ts';
export { DEFAULT_GLOBAL_API_KEY, DEFAULT_UNKNOWN_NUMBER_PREFIXES } from './options.ts';
export { DEFAULT_TIMEOUT_DELAY_MS, FAULT_MODES, type FaultInput } from './fault-registry.ts';
export { createJid } from './jid.ts';
export type { SimContext } from './sim-context.ts';
export type { SendTextResponse, SimEventMap, SimEvents } from './sim-events.ts';
export type {
  AckDelays,
  ConnectionState,
  FaultMode,
  FaultRule,
  Integration,
  LedgerEntry,
  QrCode,
  SimInstance,
  SimulatorOptions,
} from './types.ts';
