import type { EventCodec, GatewayEventEmitted } from '@gw/events';
import type { ConsumedRecord, KafkaInspector } from '@gw/kafka';
import type { GatewayEventLog } from './recover.ts';

/**
 * The gateway-events topic read through a KafkaInspector (a bounded read: to the end offsets
 * taken when the read starts). Decoding needs no registration: schemas are fetched by the id in
 * each record.
 */
export function kafkaGatewayEventLog(kafka: KafkaInspector, codec: EventCodec, topic: string): GatewayEventLog {
  return {
    topic,
    exists: () => kafka.hasTopic(topic),
    async read(fromMs, onBatch) {
      const ends = await kafka.endOffsets(topic);
      const from = await kafka.offsetsAtTime(topic, fromMs);
      await kafka.readToEnd(topic, {
        ends,
        from,
        onBatch: async (records) => {
          const events: Array<GatewayEventEmitted | null> = [];
          for (const record of records) events.push(await gatewayEvent(codec, record));
          await onBatch(events);
        },
      });
    },
  };
}

async function gatewayEvent(codec: EventCodec, record: ConsumedRecord): Promise<GatewayEventEmitted | null> {
  // An undecodable record cannot be delivered anyway; the webhooks service skips it the same way.
  const decoded = await codec.decode(record).catch(() => null);
  return decoded?.type === 'GatewayEventEmitted' ? decoded.payload : null;
}
