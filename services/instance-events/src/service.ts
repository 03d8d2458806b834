import type { Runtime } from '@gw/runtime';
import { handleInstanceEvents } from './handler.ts';
import { mapDeliveryOutcomes } from './delivery-outcomes.ts';
import { InboundRetention } from './inbound-retention.ts';

/**
 * Starts the instance-events consumers: manager events in (gateway events, opt-out facts and the
 * inbound log out), and our own delivery outcomes in (gateway events out); and the inbound log's
 * retention purge. Returns what stops the purge.
 */
export async function startInstanceEventsService(runtime: Runtime): Promise<() => Promise<void>> {
  await runtime.runStage({ name: 'instance-events', topic: 'instanceEvents', accepts: ['InstanceEventReceived'], handle: handleInstanceEvents(runtime) });
  await runtime.runStage({ name: 'delivery-outcome-events', topic: 'deliveryEvents', accepts: ['MessageDispatched', 'DeliveryFailed'], handle: mapDeliveryOutcomes(runtime) });
  const { inboundRetentionDays, inboundPurgeEveryMs } = runtime.config.instanceEvents;
  const retention = new InboundRetention(runtime, { retentionDays: inboundRetentionDays, everyMs: inboundPurgeEveryMs });
  retention.start();
  return () => retention.stop();
}
