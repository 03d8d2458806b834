import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '@gw/config';
import { EventCodec, newEventId, Topics, type DeadLetterResolved, type TopicName } from '@gw/events';
import { KafkaClient, KafkaInspector } from '@gw/kafka';
import { createLogger } from '@gw/observability';
import { deadLetterRecord } from '@gw/runtime';
import { isolate, type Isolation } from '../../../../test/support/infra.ts';
import { DeadLetterCount } from './dead-letter-count.ts';

// The open-dead-letter gauge over a real dead-letter topic: letters as the stages write them,
// resolutions as gatewayctl dlq retry|discard writes them.
let isolation: Isolation;
let kafka: KafkaClient;
let codec: EventCodec;
let topics: Topics;
let inspector: KafkaInspector;

beforeAll(async () => {
  isolation = await isolate();
  const config = loadConfig(isolation.env);
  topics = new Topics(config.topicPrefix, config.topicPartitions);
  kafka = new KafkaClient({ brokers: config.kafkaBrokers, clientId: 'dead-letter-count-test', logger: createLogger('test', 'error') });
  await kafka.ensureTopics(topics.specs());
  codec = new EventCodec(config.schemaRegistryUrl, topics);
  await codec.init(['RecordDeadLettered', 'DeadLetterResolved']);
  inspector = new KafkaInspector(config.kafkaBrokers, config.topicPrefix);
}, 120_000);

afterAll(async () => {
  await kafka?.close();
  await isolation?.cleanup();
});

/** A record the stage gave up on, as runStage dead-letters it; returns the letter's id. */
async function deadLetter(stage: string, topic: TopicName, offset: number): Promise<string> {
  const [record] = await deadLetterRecord(codec, stage, { topic: topics.name(topic), partition: 0, offset: String(offset), key: 'cus_1', value: Buffer.from('not avro'), headers: {}, timestamp: '0' }, { error: new Error('cannot decode'), tries: 3 });
  await kafka.send([record!]);
  return (await codec.decode({ ...record!, partition: 0, offset: '0', timestamp: '0', headers: record!.headers ?? {} }))!.payload.event_id;
}

async function resolve(id: string, resolution: DeadLetterResolved['resolution']) {
  const resolved: DeadLetterResolved = { event_id: newEventId(), correlation_id: id, occurred_at: Date.now(), customer_id: 'cus_1', instance_id: '', dead_letter_id: id, resolution, by: 'test', reason: 'test' };
  await kafka.send([await codec.encode('DeadLetterResolved', resolved)]);
}

async function scrape(registry: Registry): Promise<Record<string, number>> {
  const values = (await registry.getSingleMetric('gateway_dead_letters_open')!.get()).values;
  return Object.fromEntries(values.map((v) => [String(v.labels.stage), v.value]));
}

describe('the open dead letters gauge', () => {
  it('counts the letters neither retried nor discarded, per stage, as gatewayctl dlq list lists them', async () => {
    const registry = new Registry();
    const count = new DeadLetterCount({ kafka: inspector, codec, topics }, registry);
    await count.count();
    expect(await scrape(registry)).toEqual({});

    const [a, b] = [await deadLetter('policy', 'customerEvents', 10), await deadLetter('policy', 'customerEvents', 11)];
    const c = await deadLetter('webhook-enqueue', 'gatewayEvents', 4);
    await count.count();
    expect(await scrape(registry)).toEqual({ policy: 2, 'webhook-enqueue': 1 });

    await resolve(a, 'retried');
    await resolve(c, 'discarded');
    await count.count();
    expect(await scrape(registry)).toEqual({ policy: 1, 'webhook-enqueue': 0 });
    await resolve(b, 'discarded');
    await count.count();
    expect(await scrape(registry)).toEqual({ policy: 0, 'webhook-enqueue': 0 });
  });
});
