import { newEventId, type PolicyFactRecord } from '@gw/events';
import type { PolicyEvent } from '@gw/policy';

/** Wraps a policy event for the log: the decider's own JSON inside a registered Avro envelope. */
export function toFactRecord(event: PolicyEvent, correlationId: string): PolicyFactRecord {
  return {
    event_id: newEventId(),
    correlation_id: correlationId,
    occurred_at: event.at,
    customer_id: event.customerId,
    instance_id: 'instanceId' in event && typeof event.instanceId === 'string' ? event.instanceId : '',
    input_type: event.type,
    payload: JSON.stringify(event),
  };
}

export function fromFactRecord(record: PolicyFactRecord): PolicyEvent {
  const event = JSON.parse(record.payload) as PolicyEvent;
  if (event.type !== record.input_type || event.customerId !== record.customer_id) {
    throw new Error(`policy fact ${record.event_id} does not match its envelope`);
  }
  return event;
}
