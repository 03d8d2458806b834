// A stand-in service for the stop-with-parent test: it registers the runtime's shutdown (which
// watches STOP_WITH_PARENT_PID), says it is up, and would otherwise run for ever.
import { createLogger } from '@gw/observability';
import { onShutdown } from '../runtime.ts';

// The harness may be gone by the time it says "stopped": a closed pipe is no reason to crash.
process.stdout.on('error', () => undefined);
onShutdown(createLogger('stop-with-parent-test', 'warn'), async () => {
  process.stdout.write('stopped\n');
});
setInterval(() => undefined, 60_000);
process.stdout.write('up\n');
