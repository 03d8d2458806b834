export { createRuntime, runService, startOpsServer, onShutdown, type Runtime, type RuntimeOptions, type StageBatch, type StageDefinition, type StageEvents, type StageHandler } from './runtime.ts';
export { isTransient, deadLetterRecord } from './faults.ts';
