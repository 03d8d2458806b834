import { runService } from '@gw/runtime';
import { startDeliveryService } from './service.ts';

await runService('delivery', (config) => config.delivery, async (runtime) => {
  const { breakers } = await startDeliveryService(runtime);
  return () => breakers.shutdown();
});
