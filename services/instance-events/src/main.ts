import { runService } from '@gw/runtime';
import { startInstanceEventsService } from './service.ts';

await runService('instance-events', (config) => config.instanceEvents, startInstanceEventsService);
