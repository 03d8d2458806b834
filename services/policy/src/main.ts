import { runService } from '@gw/runtime';
import { startPolicyService } from './service.ts';

await runService('policy', (config) => config.policy, startPolicyService);
