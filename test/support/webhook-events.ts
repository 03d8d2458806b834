import { randomUUID } from 'node:crypto';
import type { GatewayEventEmitted } from '@gw/events';
import type { OutgoingRecord } from '@gw/kafka';
import { gatewayEventsKafka } from './gateway-events.ts';
import { buildWebhookEvent, WEBHOOK_EVENT_NAMES, type WebhookEventInput, type WebhookEventName } from '@gw/webhooks';

/** A valid example of each of the sixteen events' extra fields (spec 6.3). */
export const EXAMPLE_FIELDS: Record<WebhookEventName, Record<string, unknown>> = {
  'message.received': { from: '+14155550101', message_text: 'Where is my order?', message_type: 'text', external_message_id: 'ext-1' },
  'message.sent': { to: '+14155550102', message_purpose: 'transactional', message_id: 'msg_1' },
  'message.failed': { to: '+14155550103', message_purpose: 'support', error: 'number_not_on_network' },
  'recipient.opted_out': { from: '+14155550104', reason: 'keyword', message_text: 'STOP' },
  'instance.connected': { connection_state: 'open' },
  'instance.disconnected': { connection_state: 'close' },
  'instance.connection_updated': { connection_state: 'connecting' },
  'instance.qr_updated': { qr_available: true },
  'message.delivered': { from: '+14155550105', external_message_id: 'ext-2', status: 'delivered' },
  'message.read': { from: '+14155550106', external_message_id: 'ext-3', status: 'read' },
  'message.status_updated': { external_message_id: 'ext-4', status: 'server_ack' },
  'conversation.updated': { conversation_id: 'conv-1' },
  'call.received': { from: '+14155550107', call_status: 'ringing' },
  'call.missed': { from: '+14155550108', call_status: 'missed' },
  'group.message_received': { group_id: '1203630@g.us', from: '+14155550109', message_text: 'hello all' },
  'group.updated': { group_id: '1203630@g.us' },
};

export { WEBHOOK_EVENT_NAMES };

export interface EventItem {
  customerId: string;
  instanceId: string;
  instanceName: string;
  event: WebhookEventName;
  at?: Date;
}

/** Appends gateway events (what the instance-events service emits) straight onto the topic. */
export async function gatewayEventWriter(env: Record<string, string>) {
  const { kafka, codec } = await gatewayEventsKafka(env, 'test-gateway-event-writer');
  /** Builds and encodes one record per (instance, event), ready to append. */
  const prepare = async (items: EventItem[]) => {
    const emitted: GatewayEventEmitted[] = items.map(({ customerId, instanceId, instanceName, event, at }) => {
      const occurred = at ?? new Date();
      const built = buildWebhookEvent({ event, instance_id: instanceId, instance_name: instanceName, timestamp: occurred, ...EXAMPLE_FIELDS[event] } as WebhookEventInput);
      return { event_id: randomUUID(), correlation_id: randomUUID(), occurred_at: occurred.getTime(), customer_id: customerId, instance_id: instanceId, event, payload: built.body };
    });
    return { emitted, records: await Promise.all(emitted.map((e) => codec.encode('GatewayEventEmitted', e))) };
  };
  return {
    prepare,
    append: (records: OutgoingRecord[]) => kafka.send(records),
    /** Builds, encodes and appends one record per (instance, event); returns what was appended. */
    async emit(items: EventItem[]): Promise<GatewayEventEmitted[]> {
      const { emitted, records } = await prepare(items);
      await kafka.send(records);
      return emitted;
    },
    close: () => kafka.close(),
  };
}
