import type { Runtime } from '@gw/runtime';
import { decideSends } from './decide-sends/handler.ts';

/** Starts the policy consumer: customer-events in, policy-decisions out. */
export async function startPolicyService(runtime: Runtime): Promise<void> {
  await runtime.runStage({
    name: 'policy',
    topic: 'customerEvents',
    transform: decideSends(runtime, runtime.config.policy),
  });
}
