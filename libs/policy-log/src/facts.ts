import { newEventId, type EventCodec, type PolicyFactRecord } from '@gw/events';
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

type EncodedRecord = Awaited<ReturnType<EventCodec['encode']>>;

/**
 * Appends policy facts (an operator's or a dashboard user's change) to their customers' streams
 * under one correlation id, where the engine folds them in order with the sends. Resolves once
 * the broker has acknowledged every one: later sends are ordered after them.
 */
export async function appendFacts(out: { send(records: EncodedRecord[]): Promise<unknown> }, codec: EventCodec, facts: PolicyEvent[], correlationId: string): Promise<void> {
  const records = await Promise.all(facts.map((fact) => codec.encode('PolicyInputRecorded', toFactRecord(fact, correlationId))));
  await out.send(records);
}
