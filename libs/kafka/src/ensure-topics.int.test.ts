import { randomUUID } from 'node:crypto';
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, describe, expect, it } from 'vitest';
import { createLogger } from '@gw/observability';
import { baseConfig } from '../../../test/support/infra.ts';
import { KafkaClient } from './client.ts';

// Services starting together each make sure the topics exist, racing to create the same ones on
// a real broker: all must come back with every partition led. (The broker's retriable answers
// just after it starts cannot be brought about here on demand; ensure-topics.unit.test.ts plays
// them back.)
const prefix = `tensure-${randomUUID().slice(0, 8)}.`;
const admin = new Kafka({ brokers: baseConfig.kafkaBrokers, clientId: 'ensure-topics-test', logLevel: logLevel.NOTHING }).admin();
const clients: KafkaClient[] = [];

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  const ours = (await admin.listTopics()).filter((t) => t.startsWith(prefix));
  if (ours.length > 0) await admin.deleteTopics({ topics: ours });
  await admin.disconnect();
});

describe('ensureTopics', () => {
  it('creates the same new topics from five clients at once, and each returns only once every partition has a leader', async () => {
    await admin.connect();
    const specs = Array.from({ length: 6 }, (_, i) => ({ name: `${prefix}topic-${i}`, partitions: 6, config: { 'retention.ms': '-1' } }));
    for (let i = 0; i < 5; i++) clients.push(new KafkaClient({ brokers: baseConfig.kafkaBrokers, clientId: `ensure-${i}`, logger: createLogger(`ensure-${i}`, 'fatal') }));
    const leadersWhenDone = await Promise.all(
      clients.map(async (client) => {
        await client.ensureTopics(specs);
        const { topics } = await admin.fetchTopicMetadata({ topics: specs.map((s) => s.name) });
        return topics.flatMap((t) => t.partitions.map((p) => p.leader));
      }),
    );
    for (const leaders of leadersWhenDone) {
      expect(leaders).toHaveLength(36);
      expect(leaders.every((leader) => leader >= 0)).toBe(true);
    }
  });
});
