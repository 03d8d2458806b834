export { createRuntime, startOpsServer, onShutdown, type Runtime, type RuntimeOptions } from './runtime.ts';
