import { sql, z } from '@gw/db';
import { derivedEventId, type GatewayEventEmitted } from '@gw/events';
import type { OutgoingRecord } from '@gw/kafka';
import type { Runtime, StageHandler } from '@gw/runtime';

const SentTo = z.object({ message_id: z.string(), recipient: z.string(), message_purpose: z.string(), name: z.string() });

/** The recipient and purpose of a message, from the policy log. */
async function sentTo(runtime: Runtime, messageIds: string[]): Promise<Map<string, { to: string; purpose: string; instanceName: string }>> {
  if (messageIds.length === 0) return new Map();
  const rows = await runtime.pool.any(sql.type(SentTo)`
    SELECT p.message_id, p.recipient, p.message_purpose, i.name
      FROM policy_log p JOIN instances i ON i.id = p.instance_id
     WHERE p.message_id = ANY(${sql.array(messageIds, 'text')})`);
  return new Map(rows.map((r) => [r.message_id, { to: r.recipient, purpose: r.message_purpose, instanceName: r.name }]));
}

const derivedId = (sourceEventId: string) => derivedEventId(sourceEventId, 'gateway-event');

/**
 * Our own send outcomes as customer events: MessageDispatched is message.sent (the manager
 * accepted it) and DeliveryFailed is message.failed (definitively not sent). Ids derive from the
 * source event, so a redelivered batch yields the same records.
 */
export function mapDeliveryOutcomes(runtime: Runtime): StageHandler<'MessageDispatched' | 'DeliveryFailed'> {
  const { codec } = runtime;
  return async (events) => {
    const messages = await sentTo(runtime, events.map(({ event }) => event.payload.message_id));
    const outputs: OutgoingRecord[] = [];
    for (const { event: outcome, trace } of events) {
      const message = messages.get(outcome.payload.message_id);
      if (!message) continue;
      const common = { instance_id: outcome.payload.instance_id, instance_name: message.instanceName, timestamp: new Date(outcome.payload.occurred_at).toISOString() };
      const body =
        outcome.type === 'MessageDispatched'
          ? { event: 'message.sent', ...common, to: message.to, message_purpose: message.purpose, message_id: outcome.payload.message_id }
          : { event: 'message.failed', ...common, to: message.to, message_purpose: message.purpose, error: outcome.payload.reason, message_id: outcome.payload.message_id };
      const emitted: GatewayEventEmitted = {
        event_id: derivedId(outcome.payload.event_id),
        correlation_id: outcome.payload.correlation_id,
        occurred_at: outcome.payload.occurred_at,
        customer_id: outcome.payload.customer_id,
        instance_id: outcome.payload.instance_id,
        event: body.event,
        payload: JSON.stringify(body),
      };
      // The customer event continues the outcome's trace: its webhook post ends the send's trace.
      outputs.push(await codec.encode('GatewayEventEmitted', emitted, trace));
    }
    return outputs;
  };
}
