import { runService } from '@gw/runtime';
import { startWebhooksService } from './service.ts';

await runService('webhooks', (config) => config.webhooks, startWebhooksService);
