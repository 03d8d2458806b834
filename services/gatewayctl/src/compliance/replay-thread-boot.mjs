// A worker thread starts without the CLI's TypeScript loader: register it, then run the thread's module.
import { register } from 'tsx/esm/api';

register();
await import('./replay-thread.ts');
