// A worker thread does not inherit the process's TypeScript loader: it registers tsx itself.
import { register } from 'tsx/esm/api';

register();
await import('./replay-steps-worker.ts');
