import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { sql } from '@gw/db';
import type { InstanceEventReceived } from '@gw/events';
import { useIsolatedDatabase } from '../../../test/support/isolated-database.ts';
import { guardFacts } from './guard-facts.ts';
import { mapInstanceEvent, type MapContext } from './map-event.ts';
import { recordSendFacts, sentMessage } from './store.ts';

// The number guard's facts from the envelopes Evolution posts (issue 27), against real Postgres:
// each fact once per instance, the same records again for a redelivered event, nothing for a
// different event telling the same thing.
const db = useIsolatedDatabase();
const ctx: MapContext = { optOutKeywords: ['STOP'], optInKeywords: [], acceptedCalls: new Set() };
const arrival = Date.UTC(2026, 1, 3, 12);

function received(instanceId: string, envelope: Record<string, unknown>, eventId: string = randomUUID()): InstanceEventReceived {
  return { event_id: eventId, customer_id: 'cus_guard', instance_id: instanceId, instance_name: 'desk', occurred_at: arrival, event: String(envelope.event), payload: JSON.stringify(envelope), digest: eventId } as InstanceEventReceived;
}

/** The stage's path: map, look our sends up, then the guard's facts (as handler.ts does). */
async function facts(instanceId: string, envelope: Record<string, unknown>, eventId?: string) {
  const event = received(instanceId, envelope, eventId);
  const mapped = mapInstanceEvent(envelope, ctx);
  const restrictions = await Promise.all(mapped.restrictions.map(async (report) => ({ report, send: report.externalMessageId ? await sentMessage(db.pool, instanceId, report.externalMessageId) : null })));
  const records = await guardFacts(db.pool, event, mapped, restrictions);
  return { eventId: event.event_id, records, payloads: records.map((r) => JSON.parse(r.payload) as Record<string, unknown>) };
}

const open = (dateTime: string) => ({ event: 'connection.update', date_time: dateTime, data: { instance: 'desk', state: 'open', statusReason: 200 } });
const inbound = (jid: string) => ({ event: 'messages.upsert', data: { key: { remoteJid: jid, fromMe: false, id: randomUUID() }, message: { conversation: 'hello' }, messageType: 'conversation' } });
const error = (keyId: string) => ({ event: 'messages.update', date_time: '2026-02-03T11:00:00.000Z', data: { keyId, remoteJid: '14155552671@s.whatsapp.net', fromMe: true, status: 'ERROR' } });
const ins = () => `ins_guard_${randomUUID().slice(0, 8)}`;

describe('the number guard facts of instance-events', () => {
  it('tells the first connection once, at the manager\'s date_time (never later than arrival), and again only to a redelivery of the same event', async () => {
    const instance = ins();
    const first = await facts(instance, open('2026-02-03T09:00:00.000Z'));
    expect(first.payloads).toEqual([{ type: 'InstanceConnected', customerId: 'cus_guard', at: arrival, instanceId: instance, firstConnectedAt: Date.parse('2026-02-03T09:00:00.000Z') }]);
    expect((await facts(instance, open('2026-02-03T10:00:00.000Z'))).records).toEqual([]);
    const again = await facts(instance, open('2026-02-03T09:00:00.000Z'), first.eventId);
    expect(again.records).toEqual(first.records);
    // A manager clock ahead of ours (local time written with a Z) dates it at the arrival.
    expect((await facts(ins(), open('2026-02-04T09:00:00.000Z'))).payloads[0]).toMatchObject({ firstConnectedAt: arrival });
  });

  it('tells an instance connected before the guard (the migration\'s backfill) with the next event of any kind', async () => {
    const instance = ins();
    const before = Date.UTC(2025, 5, 1);
    await db.pool.query(sql.typeAlias('void')`INSERT INTO instance_first_connections (instance_id, first_connected_at) VALUES (${instance}, to_timestamp(${before}::double precision / 1000))`);
    const next = await facts(instance, { event: 'chats.upsert', data: [{ remoteJid: '14155552671@s.whatsapp.net' }] });
    expect(next.payloads).toEqual([expect.objectContaining({ type: 'InstanceConnected', firstConnectedAt: before })]);
    expect((await facts(instance, open('2026-02-03T09:00:00.000Z'))).records).toEqual([]);
  });

  it('learns each person who writes once (phone, or the lid of a sender without one); groups teach nobody', async () => {
    const instance = ins();
    const first = await facts(instance, inbound('14155552671@s.whatsapp.net'));
    expect(first.payloads).toEqual([{ type: 'ContactLearned', customerId: 'cus_guard', at: arrival, instanceId: instance, contact: '+14155552671' }]);
    expect((await facts(instance, inbound('14155552671@s.whatsapp.net'))).records).toEqual([]);
    expect((await facts(instance, inbound('123456789012345@lid'))).payloads).toEqual([expect.objectContaining({ contact: '123456789012345@lid' })]);
    const group = { event: 'messages.upsert', data: { key: { remoteJid: '120363025246125486@g.us', participant: '14155550009@s.whatsapp.net', fromMe: false, id: 'G1' }, message: { conversation: 'hi' } } };
    expect((await facts(instance, group)).records).toEqual([]);
    expect((await facts(instance, inbound('14155552671@s.whatsapp.net'), first.eventId)).records).toEqual(first.records);
  });

  it('reads an ERROR on one of our sends as a restriction signal naming our message, once; an ERROR on a message not ours is none; a 403 close is a ban', async () => {
    const instance = ins();
    await recordSendFacts(db.pool, [{ messageId: 'msg_guard_1', instanceId: instance, customerId: 'cus_guard', recipient: '+14155552671', purpose: 'support', instanceName: 'desk', providerMessageId: '3EB0GUARD1', recordedAt: arrival - 5_000 }]);
    const signalled = await facts(instance, error('3EB0GUARD1'));
    expect(signalled.payloads).toEqual([
      { type: 'RestrictionSignalled', customerId: 'cus_guard', at: arrival, instanceId: instance, signal: 'send_error', code: null, until: null, messageId: 'msg_guard_1', recipient: '+14155552671' },
    ]);
    // The same report posted again (another event): counted once. A redelivery: the same record.
    expect((await facts(instance, error('3EB0GUARD1'))).records).toEqual([]);
    expect((await facts(instance, error('3EB0GUARD1'), signalled.eventId)).records).toEqual(signalled.records);
    expect((await facts(instance, error('3EB0NOTOURS'))).records).toEqual([]);
    const close = { event: 'connection.update', date_time: '2026-02-03T11:30:00.000Z', data: { instance: 'desk', state: 'close', statusReason: 403 } };
    expect((await facts(instance, close)).payloads).toEqual([expect.objectContaining({ type: 'RestrictionSignalled', signal: 'banned', code: '403', messageId: null, recipient: null })]);
  });
});
