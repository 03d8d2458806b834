import { createRuntime, onShutdown, startOpsServer } from '@gw/runtime';
import { startDeliveryService } from './service.ts';

const runtime = await createRuntime('delivery');
const { breakers } = await startDeliveryService(runtime);
const ops = await startOpsServer(runtime, runtime.config.delivery.host, runtime.config.delivery.port);
runtime.logger.info({ port: runtime.config.delivery.port }, 'delivery service started');
onShutdown(runtime.logger, async () => {
  await ops.close();
  await runtime.close();
  breakers.shutdown();
});
