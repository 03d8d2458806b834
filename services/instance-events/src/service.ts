import type { Runtime } from '@gw/runtime';
import { handleInstanceEvents } from './handler.ts';
import { mapDeliveryOutcomes } from './delivery-outcomes.ts';
import { reconcileUnknownSends } from './reconcile.ts';

/** Starts the instance-events consumer: instance-events in; gateway-events and opt-out facts out. */
export async function startInstanceEventsService(runtime: Runtime): Promise<void> {
  await runtime.runStage({ name: 'instance-events', topic: 'instanceEvents', transform: handleInstanceEvents(runtime) });
  await runtime.runStage({ name: 'delivery-outcome-events', topic: 'deliveryEvents', transform: mapDeliveryOutcomes(runtime) });

  // Sends whose answer was lost are resolved from the manager's own reports, never resent.
  const { reconcileEveryMs, ackDeadlineMs } = runtime.config.instanceEvents;
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    reconcileUnknownSends(runtime, ackDeadlineMs)
      .catch((error) => runtime.logger.warn({ error: String(error) }, 'reconciling unknown sends failed'))
      .finally(() => (running = false));
  }, reconcileEveryMs);
  timer.unref();
  runtime.consumers.push({ groupId: 'reconciler', ready: Promise.resolve(), isReady: () => true, stop: async () => clearInterval(timer) });
}
