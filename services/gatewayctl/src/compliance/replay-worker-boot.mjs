// A worker thread does not inherit the TypeScript loader of the process that starts it (gatewayctl
// registers tsx through its API, vitest has its own), so the worker registers tsx itself.
import { register } from 'tsx/esm/api';

register();
await import('./replay-worker.ts');
