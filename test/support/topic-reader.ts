import { loadConfig } from '@gw/config';
import { EventCodec, Topics, type AnyEvent, type TopicName } from '@gw/events';
import { KafkaClient } from '@gw/kafka';
import { createLogger } from '@gw/observability';

/** Reads a whole topic (committed records only) through the registry, as an independent consumer. */
export async function readTopic(env: Record<string, string>, topic: TopicName, settleMs = 3000): Promise<AnyEvent[]> {
  const config = loadConfig(env);
  const topics = new Topics(config.topicPrefix, config.topicPartitions);
  const kafka = new KafkaClient({ brokers: config.kafkaBrokers, clientId: 'test-reader', logger: createLogger('test-reader', 'error') });
  const codec = new EventCodec(config.schemaRegistryUrl, topics);
  await codec.init();
  const events: AnyEvent[] = [];
  let last = Date.now();
  const consumer = await kafka.listen({
    groupId: `${config.topicPrefix}test-reader-${Date.now()}`,
    topics: [topics.name(topic)],
    fromBeginning: true,
    onRecord: async (record) => {
      const event = await codec.decode(record);
      if (event) events.push(event);
      last = Date.now();
    },
  });
  await consumer.ready;
  while (Date.now() - last < settleMs) await new Promise((r) => setTimeout(r, 200));
  await kafka.close();
  return events;
}
