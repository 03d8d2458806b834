import type { Runtime } from '@gw/runtime';
import { handleInstanceEvents } from './handler.ts';
import { mapDeliveryOutcomes } from './delivery-outcomes.ts';
import { reconcileUnknownSends } from './reconcile.ts';

/** Starts the instance-events consumer: instance-events in; gateway-events and opt-out facts out. */
export async function startInstanceEventsService(runtime: Runtime): Promise<void> {
  const consumer = await runtime.kafka.transform({
    groupId: runtime.topics.group('instance-events'),
    topics: [runtime.topics.name('instanceEvents')],
    instanceId: runtime.config.consumerInstanceId,
    transactionalIdPrefix: runtime.topics.group('instance-events-tx'),
    transform: handleInstanceEvents(runtime),
  });
  runtime.consumers.push(consumer);
  runtime.watchLag(consumer.groupId, [runtime.topics.name('instanceEvents')]);

  const outcomes = await runtime.kafka.transform({
    groupId: runtime.topics.group('delivery-outcome-events'),
    topics: [runtime.topics.name('deliveryEvents')],
    instanceId: runtime.config.consumerInstanceId,
    transactionalIdPrefix: runtime.topics.group('delivery-outcome-events-tx'),
    transform: mapDeliveryOutcomes(runtime),
  });
  runtime.consumers.push(outcomes);
  runtime.watchLag(outcomes.groupId, [runtime.topics.name('deliveryEvents')]);

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
