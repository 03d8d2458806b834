import { derivedEventId, type DeliveryFailed, type MessageDispatched } from '@gw/events';
import type { OutgoingRecord } from '@gw/kafka';
import type { Runtime, StageHandler } from '@gw/runtime';
import { buildCustomerEvent } from '@gw/webhooks';
import { recordSendFacts, sendFactsOf, type SendFacts } from './store.ts';

const derivedId = (sourceEventId: string) => derivedEventId(sourceEventId, 'gateway-event');

type Outcome = MessageDispatched | DeliveryFailed;

/** The send's facts as the outcome event carries them; null for a record written before it did (the fields absent or empty). */
function factsOnEvent(outcome: Outcome, providerMessageId: string | null): SendFacts | null {
  if (!outcome.recipient || !outcome.message_purpose) return null;
  return {
    messageId: outcome.message_id,
    instanceId: outcome.instance_id,
    customerId: outcome.customer_id,
    recipient: outcome.recipient,
    purpose: outcome.message_purpose,
    // Delivery writes '' for an instance its directory did not know: the id is all there is to name it by.
    instanceName: outcome.instance_name || outcome.instance_id,
    providerMessageId,
    recordedAt: outcome.occurred_at,
  };
}

/**
 * Our own send outcomes as customer events: MessageDispatched is message.sent (the manager
 * accepted it) and DeliveryFailed is message.failed (definitively not sent). Built from the event
 * alone: it carries the recipient, purpose and instance name. A record written before it did is
 * told from this stage's own projection (instance_send_facts, backfilled for recent sends by
 * migration 1700000002800); one it does not know either is logged and counted, never dropped in
 * silence. Every outcome also enters that projection (a later ERROR report of the message names
 * only the provider id). Ids derive from the source event, so a redelivered batch yields the same
 * records.
 */
export function mapDeliveryOutcomes(runtime: Runtime): StageHandler<'MessageDispatched' | 'DeliveryFailed'> {
  const { codec, pool, logger, metrics } = runtime;
  const group = runtime.topics.group('delivery-outcome-events');
  return async (events) => {
    const facts = events.map(({ event }) => factsOnEvent(event.payload, event.type === 'MessageDispatched' ? event.payload.provider_message_id : null));
    const older = events.flatMap(({ event }, i) => (facts[i] ? [] : [event.payload.message_id]));
    const known = await sendFactsOf(pool, older);

    const outputs: OutgoingRecord[] = [];
    const learned: SendFacts[] = [];
    for (const [i, { event, trace }] of events.entries()) {
      const outcome = event.payload;
      const send = facts[i] ?? known.get(outcome.message_id);
      const log = { correlation_id: outcome.correlation_id, message_id: outcome.message_id, event: event.type };
      if (!send) {
        metrics.eventsProcessed.inc({ group, topic: 'delivery-events', outcome: 'unknown_send' });
        logger.warn(log, 'an outcome record without its send\'s facts, of a send this stage does not know: no customer event');
        continue;
      }
      if (event.type === 'MessageDispatched') learned.push({ ...send, providerMessageId: event.payload.provider_message_id });
      else learned.push(send);
      const origin = { eventId: derivedId(outcome.event_id), correlationId: outcome.correlation_id, occurredAt: outcome.occurred_at, customerId: outcome.customer_id, instanceId: outcome.instance_id };
      const base = { instance_id: outcome.instance_id, instance_name: send.instanceName, timestamp: new Date(outcome.occurred_at), to: send.recipient, message_purpose: send.purpose, message_id: outcome.message_id };
      const built =
        event.type === 'MessageDispatched'
          ? buildCustomerEvent(origin, { event: 'message.sent', ...base })
          : buildCustomerEvent(origin, { event: 'message.failed', ...base, error: event.payload.reason });
      if (built.kind === 'refused') {
        metrics.eventsProcessed.inc({ group, topic: 'delivery-events', outcome: 'refused' });
        logger.warn({ ...log, fields: built.issues.map((issue) => issue.field) }, 'outcome not valid as a customer event: no customer event');
        continue;
      }
      // The customer event continues the outcome's trace: its webhook post ends the send's trace.
      outputs.push(await codec.encode('GatewayEventEmitted', built.record, trace));
    }
    await recordSendFacts(pool, learned);
    return outputs;
  };
}
