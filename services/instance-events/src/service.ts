import type { Runtime } from '@gw/runtime';
import { handleInstanceEvents } from './handler.ts';
import { mapDeliveryOutcomes } from './delivery-outcomes.ts';

/** Starts the instance-events consumers: manager events in (gateway events and opt-out facts out), and our own delivery outcomes in (gateway events out). */
export async function startInstanceEventsService(runtime: Runtime): Promise<void> {
  await runtime.runStage({ name: 'instance-events', topic: 'instanceEvents', accepts: ['InstanceEventReceived'], handle: handleInstanceEvents(runtime) });
  await runtime.runStage({ name: 'delivery-outcome-events', topic: 'deliveryEvents', accepts: ['MessageDispatched', 'DeliveryFailed'], handle: mapDeliveryOutcomes(runtime) });
}
