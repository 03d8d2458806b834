import { createRuntime, onShutdown, startOpsServer } from '@gw/runtime';
import { startInstanceEventsService } from './service.ts';

const runtime = await createRuntime('instance-events');
await startInstanceEventsService(runtime);
const ops = await startOpsServer(runtime, runtime.config.instanceEvents.host, runtime.config.instanceEvents.port);
runtime.logger.info({ port: runtime.config.instanceEvents.port }, 'instance-events service started');
onShutdown(runtime.logger, async () => {
  await ops.close();
  await runtime.close();
});
