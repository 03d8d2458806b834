// A worker thread starts without the TypeScript loader of the process that made it (gatewayctl runs
// through tsx): register it, then run the thread's module.
import { register } from 'tsx/esm/api';

register();
await import('./replay-thread.ts');
