import { createPolicy } from '@gw/policy';
import type { Runtime } from '@gw/runtime';
import { decideSends, POLICY_INPUTS } from './decide-sends/handler.ts';

/** Starts the policy consumer: customer-events in, policy-decisions out. */
export async function startPolicyService(runtime: Runtime): Promise<void> {
  // The configuration is checked here, at start: an unusable one stops the service with every problem named.
  const policy = createPolicy();
  runtime.logger.info({ policy_version: policy.version }, 'policy configuration checked');
  await runtime.runStage({
    name: 'policy',
    topic: 'customerEvents',
    accepts: POLICY_INPUTS,
    handle: decideSends(runtime, { ...runtime.config.policy, policy }),
  });
}
