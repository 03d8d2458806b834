import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMPATIBILITY, SchemaRegistry, SchemaType } from '@kafkajs/confluent-schema-registry';
import { sql } from '@gw/db';
import { EventCodec, loadSchema, newEventId, Topics, type DeliveryFailed, type GatewayEventEmitted, type InstanceEventReceived, type MessageDispatched } from '@gw/events';
import type { OutgoingRecord } from '@gw/kafka';
import { createRuntime, type Runtime, type StageEvents } from '@gw/runtime';
import { isolate, type Isolation } from '../../../test/support/infra.ts';
import { mapDeliveryOutcomes } from './delivery-outcomes.ts';
import { handleInstanceEvents } from './handler.ts';
import { contractProblems } from './testing/contract-schema.ts';

// The customer events of our own sends (message.sent / message.failed) and of the manager's ERROR
// reports, made by the instance-events stage from the delivery events alone and its own
// projection of our sends, against real Postgres and the real registry. No policy_log or
// deliveries row exists in this database: the stage must not need one.
let isolation: Isolation;
let runtime: Runtime;
/** The schema id of MessageDispatched as it was before it carried the send's facts. */
let oldDispatchedSchemaId: number;
let registry: SchemaRegistry;

const NEW_FIELDS = new Set(['recipient', 'message_purpose', 'instance_name']);
const batch = { topic: 'delivery-events', partition: 0, heartbeat: async () => undefined, nextOffset: 0n };
const CUSTOMER = 'cus_outcomes';
const INSTANCE = 'ins_outcomes_000000000000000';

beforeAll(async () => {
  isolation = await isolate();
  // A registry that already holds the previous version of MessageDispatched (records were written
  // with it): the runtime registers the new one under BACKWARD compatibility, which must accept it.
  registry = new SchemaRegistry({ host: isolation.env.SCHEMA_REGISTRY_URL! });
  const previous = JSON.parse(loadSchema('MessageDispatched')) as { fields: Array<{ name: string }> };
  previous.fields = previous.fields.filter((f) => !NEW_FIELDS.has(f.name));
  const subject = EventCodec.subject(new Topics(isolation.topicPrefix, 6).forEvent('MessageDispatched'), 'MessageDispatched');
  ({ id: oldDispatchedSchemaId } = await registry.register({ type: SchemaType.AVRO, schema: JSON.stringify(previous) }, { subject, compatibility: COMPATIBILITY.BACKWARD }));
  runtime = await createRuntime('instance-events-test', { env: { ...process.env, ...isolation.env }, defaultMetrics: false });
}, 120_000);

afterAll(async () => {
  await runtime?.close();
  await isolation?.cleanup();
});

const base = (messageId = `msg_${randomUUID()}`) => ({
  event_id: newEventId(),
  correlation_id: `cmd_${randomUUID()}`,
  occurred_at: Date.UTC(2026, 0, 5, 12),
  customer_id: CUSTOMER,
  instance_id: INSTANCE,
  message_id: messageId,
  log_id: 7,
});

const dispatchedEvent = (provider: string, to = '+14155550101'): MessageDispatched => ({
  ...base(),
  provider_message_id: provider,
  provider_status: 'PENDING',
  recipient: to,
  message_purpose: 'transactional',
  instance_name: 'reception',
});

let offset = 0n;
const asOutcomes = (events: Array<{ type: 'MessageDispatched'; payload: MessageDispatched } | { type: 'DeliveryFailed'; payload: DeliveryFailed }>): StageEvents<'MessageDispatched' | 'DeliveryFailed'> =>
  events.map((event) => ({ offset: offset++, event }));

/** The customer events among a handler's outputs, each body checked against the contract's JSON Schema. */
async function customerEvents(outputs: OutgoingRecord[]): Promise<Array<Record<string, unknown>>> {
  const bodies: Array<Record<string, unknown>> = [];
  for (const r of outputs) {
    const event = await runtime.codec.decode({ topic: r.topic, partition: 0, offset: '0', key: r.key, value: r.value, headers: r.headers ?? {}, timestamp: '0' });
    if (event?.type !== 'GatewayEventEmitted') continue;
    const emitted: GatewayEventEmitted = event.payload;
    expect(contractProblems(emitted.payload), `${emitted.event} body`).toEqual([]);
    bodies.push(JSON.parse(emitted.payload) as Record<string, unknown>);
  }
  return bodies;
}

/** A manager's messages.update report of a message we sent, as the ingest appends it. */
function statusReport(providerId: string, status: string): InstanceEventReceived {
  const envelope = { event: 'messages.update', instance: 'reception-mgr', data: { keyId: providerId, remoteJid: '14155550101@s.whatsapp.net', fromMe: true, status } };
  return {
    event_id: newEventId(),
    correlation_id: newEventId(),
    occurred_at: Date.UTC(2026, 0, 5, 12, 5),
    customer_id: CUSTOMER,
    instance_id: INSTANCE,
    instance_name: 'reception',
    manager_instance: 'reception-mgr',
    event: 'messages.update',
    digest: randomUUID(),
    payload: JSON.stringify(envelope),
  };
}
const reports = (events: InstanceEventReceived[]): StageEvents<'InstanceEventReceived'> => events.map((payload) => ({ offset: offset++, event: { type: 'InstanceEventReceived', payload } }));

describe('our own outcomes as customer events', () => {
  it('a MessageDispatched whose decision is in no policy_log row still gives its message.sent, from the event alone', async () => {
    const dispatched = dispatchedEvent('3EB0OUTCOME0001');
    const bodies = await customerEvents(await mapDeliveryOutcomes(runtime)(asOutcomes([{ type: 'MessageDispatched', payload: dispatched }]), batch));
    expect(bodies).toEqual([
      {
        event: 'message.sent',
        instance_id: INSTANCE,
        instance_name: 'reception',
        timestamp: '2026-01-05T12:00:00.000Z',
        to: '+14155550101',
        message_purpose: 'transactional',
        message_id: dispatched.message_id,
      },
    ]);
  });

  it('a DeliveryFailed gives its message.failed with the reason, from the event alone', async () => {
    const failed: DeliveryFailed = { ...base(), reason: 'unknown_number', detail: 'not on WhatsApp', definitive: true, recipient: '+14155550102', message_purpose: 'support', instance_name: 'reception' };
    const bodies = await customerEvents(await mapDeliveryOutcomes(runtime)(asOutcomes([{ type: 'DeliveryFailed', payload: failed }]), batch));
    expect(bodies).toEqual([
      { event: 'message.failed', instance_id: INSTANCE, instance_name: 'reception', timestamp: '2026-01-05T12:00:00.000Z', to: '+14155550102', message_purpose: 'support', error: 'unknown_number', message_id: failed.message_id },
    ]);
  });

  it("a manager's ERROR report of our message becomes a message.failed naming it, from the stage's own projection of our sends", async () => {
    const dispatched = dispatchedEvent('3EB0OUTCOME0002', '+14155550103');
    await mapDeliveryOutcomes(runtime)(asOutcomes([{ type: 'MessageDispatched', payload: dispatched }]), batch);
    const bodies = await customerEvents(await handleInstanceEvents(runtime)(reports([statusReport('3EB0OUTCOME0002', 'ERROR')]), batch));
    expect(bodies.find((b) => b.event === 'message.failed')).toEqual({
      event: 'message.failed',
      instance_id: INSTANCE,
      instance_name: 'reception',
      timestamp: '2026-01-05T12:05:00.000Z',
      to: '+14155550103',
      message_purpose: 'transactional',
      error: 'delivery_failed',
      message_id: dispatched.message_id,
      external_message_id: '3EB0OUTCOME0002',
    });
    expect(bodies.map((b) => b.event)).toEqual(['message.failed', 'message.status_updated']);
  });

  it('an ERROR report of a message not sent through the gateway gives its status update, and no message.failed it could not fill', async () => {
    const bodies = await customerEvents(await handleInstanceEvents(runtime)(reports([statusReport('3EB0NOTOURS0001', 'ERROR')]), batch));
    expect(bodies.map((b) => [b.event, b.status, b.external_message_id])).toEqual([['message.status_updated', 'failed', '3EB0NOTOURS0001']]);
  });

  it('a record written with the previous schema decodes without the facts, and is told from the projection (backfilled by the migration)', async () => {
    const { recipient: _r, message_purpose: _p, instance_name: _n, ...previous } = dispatchedEvent('3EB0OUTCOME0003');
    const value = await registry.encode(oldDispatchedSchemaId, previous);
    const decoded = await runtime.codec.decode({ topic: 'delivery-events', partition: 0, offset: '0', key: CUSTOMER, value, headers: { 'event-type': 'MessageDispatched' }, timestamp: '0' });
    expect(decoded?.type).toBe('MessageDispatched');
    expect((decoded!.payload as Partial<MessageDispatched>).recipient).toBeUndefined();
    const old = decoded as { type: 'MessageDispatched'; payload: MessageDispatched };

    // Not known anywhere: logged and counted, no customer event, no failed batch.
    expect(await customerEvents(await mapDeliveryOutcomes(runtime)(asOutcomes([old]), batch))).toEqual([]);

    // Known to the projection, as migration 1700000002800 backfills it for the sends made before the upgrade.
    await runtime.pool.query(sql.typeAlias('void')`
      INSERT INTO instance_send_facts (message_id, instance_id, customer_id, recipient, message_purpose, instance_name, provider_message_id, recorded_at)
      VALUES (${previous.message_id}, ${INSTANCE}, ${CUSTOMER}, '+14155550104', 'authentication', 'reception', NULL, now())`);
    const bodies = await customerEvents(await mapDeliveryOutcomes(runtime)(asOutcomes([old]), batch));
    expect(bodies).toEqual([
      { event: 'message.sent', instance_id: INSTANCE, instance_name: 'reception', timestamp: '2026-01-05T12:00:00.000Z', to: '+14155550104', message_purpose: 'authentication', message_id: previous.message_id },
    ]);
  });
});
