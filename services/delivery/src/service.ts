import { ManagerBreakers } from '@gw/evolution';
import type { Runtime } from '@gw/runtime';
import { SecretBox } from '@gw/security';
import { dispatchAccepted } from './dispatch/handler.ts';
import { InstanceDirectory } from './dispatch/instance-directory.ts';

/** Starts the delivery consumer: accepted decisions in, MessageDispatched / DeliveryFailed out. */
export async function startDeliveryService(runtime: Runtime): Promise<{ breakers: ManagerBreakers }> {
  const breakers = new ManagerBreakers({ resetTimeoutMs: runtime.config.delivery.breakerResetMs });
  const directory = new InstanceDirectory(runtime.pool, SecretBox.fromConfig(runtime.config.secretKey));
  await runtime.runStage({
    name: 'delivery',
    topic: 'policyDecisions',
    transform: dispatchAccepted({ runtime, directory, breakers }),
    partitionsConsumedConcurrently: runtime.config.topicPartitions,
  });
  return { breakers };
}
