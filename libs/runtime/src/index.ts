export { createRuntime, runService, startOpsServer, onShutdown, type Runtime, type RuntimeOptions } from './runtime.ts';
export { isTransient, deadLetterRecord } from './faults.ts';
