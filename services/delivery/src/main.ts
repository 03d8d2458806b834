import { runService } from '@gw/runtime';
import { startDeliveryService } from './service.ts';

await runService('delivery', (config) => config.delivery, startDeliveryService);
