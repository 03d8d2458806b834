import { loadConfig } from '@gw/config';
import { EventCodec, Topics } from '@gw/events';
import { KafkaClient } from '@gw/kafka';
import { createLogger } from '@gw/observability';

export interface EmittedGatewayEvent {
  event_id: string;
  event: string;
  instance_id: string;
  body: Record<string, unknown>;
}

/** A Kafka client and codec for a stack's gateway-events topic. */
export async function gatewayEventsKafka(env: Record<string, string>, clientId: string) {
  const config = loadConfig(env);
  const topics = new Topics(config.topicPrefix, config.topicPartitions);
  const kafka = new KafkaClient({ brokers: config.kafkaBrokers, clientId, logger: createLogger(clientId, 'error') });
  await kafka.ensureTopics(topics.specs());
  const codec = new EventCodec(config.schemaRegistryUrl, topics);
  await codec.init(['GatewayEventEmitted']);
  return { config, topics, kafka, codec };
}

/** Follows the gateway-events topic (committed records only) from the beginning, collecting as it goes. */
export async function followGatewayEvents(env: Record<string, string>): Promise<{ events: EmittedGatewayEvent[]; close(): Promise<void> }> {
  const { config, topics, kafka, codec } = await gatewayEventsKafka(env, 'test-gateway-events');
  const events: EmittedGatewayEvent[] = [];
  const consumer = await kafka.listen({
    groupId: `${config.topicPrefix}test-gateway-events-${Date.now()}`,
    topics: [topics.name('gatewayEvents')],
    fromBeginning: true,
    onRecord: async (record) => {
      const decoded = await codec.decode(record);
      if (decoded?.type === 'GatewayEventEmitted') {
        events.push({ event_id: decoded.payload.event_id, event: decoded.payload.event, instance_id: decoded.payload.instance_id, body: JSON.parse(decoded.payload.payload) as Record<string, unknown> });
      }
    },
  });
  await consumer.ready;
  return { events, close: () => kafka.close() };
}
