import { afterAll, describe, expect, it } from 'vitest';
import { SchemaRegistry, SchemaType } from '@kafkajs/confluent-schema-registry';
import { loadConfig } from '@gw/config';
import { EventCodec } from './codec.ts';
import { loadSchema } from './schemas.ts';
import { Topics } from './topics.ts';
import type { SendRequested } from './event-types.ts';

const config = loadConfig();
const prefix = `codec${Date.now().toString(36)}.`;
const registryUrl = config.schemaRegistryUrl;

const sample: SendRequested = {
  event_id: 'evt-1',
  correlation_id: 'cmd-1',
  occurred_at: 1_795_000_000_000,
  customer_id: 'cus_1',
  instance_id: 'ins_1',
  instance_name: 'demo',
  message_id: 'msg_1',
  phone: '+14155552671',
  message: 'Your code is 123456',
  message_purpose: 'authentication',
  source: 'api',
  idempotency_key: null,
};

afterAll(async () => {
  // Leave the shared registry as we found it.
  const subjects = (await (await fetch(`${registryUrl}/subjects`)).json()) as string[];
  for (const subject of subjects.filter((s) => s.startsWith(prefix))) {
    await fetch(`${registryUrl}/subjects/${encodeURIComponent(subject)}`, { method: 'DELETE' });
  }
});

describe('EventCodec against the real registry', () => {
  it('registers the same schema twice on a fresh subject and gets the same id', async () => {
    const registry = new SchemaRegistry({ host: registryUrl });
    const subject = `${prefix}twice-chatgateway.events.SendRequested`;
    const first = await registry.register({ type: SchemaType.AVRO, schema: loadSchema('SendRequested') }, { subject });
    const second = await registry.register({ type: SchemaType.AVRO, schema: loadSchema('SendRequested') }, { subject });
    expect(second.id).toBe(first.id);
    const versions = (await (await fetch(`${registryUrl}/subjects/${encodeURIComponent(subject)}/versions`)).json()) as number[];
    expect(versions).toHaveLength(1);
  });

  it('encodes in the Confluent wire format and decodes back', async () => {
    const codec = new EventCodec(registryUrl, new Topics(prefix, 1));
    await codec.init();
    const again = new EventCodec(registryUrl, new Topics(prefix, 1));
    await again.init();
    expect(again.schemaId('SendRequested')).toBe(codec.schemaId('SendRequested'));

    const record = await codec.encode('SendRequested', sample);
    expect(record.topic).toBe(`${prefix}customer-events.v1`);
    expect(record.key).toBe('cus_1');
    expect(record.headers).toMatchObject({ 'event-type': 'SendRequested', 'correlation-id': 'cmd-1' });
    expect(record.value[0]).toBe(0); // magic byte
    expect(record.value.readInt32BE(1)).toBe(codec.schemaId('SendRequested'));

    // The registry serves the schema by id through the Confluent-compatible API.
    const byId = (await (await fetch(`${registryUrl}/schemas/ids/${codec.schemaId('SendRequested')}`)).json()) as { schema: string };
    expect(JSON.parse(byId.schema).name).toBe('SendRequested');

    const decoded = await codec.decode({
      topic: record.topic,
      partition: 0,
      offset: '0',
      key: record.key,
      value: record.value,
      headers: record.headers!,
      timestamp: '0',
    });
    expect(decoded).toEqual({ type: 'SendRequested', payload: sample });
  });
});
