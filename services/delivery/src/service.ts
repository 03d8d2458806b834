import { ManagerBreakers } from '@gw/evolution';
import type { Runtime } from '@gw/runtime';
import { SecretBox } from '@gw/security';
import { breakerMetrics } from './breaker-metrics.ts';
import { dispatchAccepted } from './dispatch/handler.ts';
import { InstanceDirectory } from './dispatch/instance-directory.ts';
import { InstanceLanes } from './dispatch/send-lanes.ts';
import { OpenSendResolver } from './resolve/resolver.ts';

/**
 * Starts the delivery consumer (accepted decisions in, MessageDispatched / DeliveryFailed out) and
 * the resolver of sends whose outcome is open. Returns what shuts them down.
 */
export async function startDeliveryService(runtime: Runtime): Promise<() => Promise<void>> {
  const settings = runtime.config.delivery;
  const breakers = new ManagerBreakers({ resetTimeoutMs: settings.breakerResetMs });
  breakerMetrics(runtime.metrics.registry, breakers);
  const directory = new InstanceDirectory(runtime.pool, SecretBox.fromConfig(runtime.config.secretKey));
  // One send at a time per instance in this process, the stage's and the resolver's alike.
  const lanes = new InstanceLanes(() => settings.pacing);
  const resolver = new OpenSendResolver(
    { runtime, directory, breakers, lanes },
    { everyMs: settings.resolveEveryMs, afterMs: settings.resolveAfterMs, ackDeadlineMs: settings.ackDeadlineMs, maxAttempts: settings.maxAttempts,
      lookupTimeoutMs: settings.sendTimeoutMs, settleMs: settings.sendSettleMs, storeEvidenceTtlMs: settings.storeEvidenceTtlMs },
  );
  await runtime.runStage({
    name: 'delivery',
    topic: 'policyDecisions',
    accepts: ['SendDecided'],
    handle: dispatchAccepted({ runtime, directory, breakers, lanes }),
    partitionsConsumedConcurrently: runtime.config.topicPartitions,
  });
  resolver.start();
  return async () => {
    await resolver.stop();
    breakers.shutdown();
  };
}
