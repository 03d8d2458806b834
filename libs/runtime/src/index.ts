export { createRuntime, runService, startOpsServer, onShutdown, type Runtime, type RuntimeOptions } from './runtime.ts';
