import type { ResolvedOptions, SimulatorOptions } from './types.ts';

export const DEFAULT_GLOBAL_API_KEY = 'sim-global-key';
export const DEFAULT_UNKNOWN_NUMBER_PREFIXES = ['+999', '999', '1999'];

export function resolveOptions(options: SimulatorOptions = {}): ResolvedOptions {
  return {
    globalApiKey: options.globalApiKey ?? DEFAULT_GLOBAL_API_KEY,
    unknownNumberPrefixes: options.unknownNumberPrefixes ?? DEFAULT_UNKNOWN_NUMBER_PREFIXES,
    logger: options.logger ?? false,
    logLevel: options.logLevel ?? 'info',
    honourSendDelay: options.honourSendDelay ?? true,
    ackDelays: options.ackDelays ?? {},
  };
}
