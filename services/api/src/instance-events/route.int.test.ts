import { createHash, randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { sql, z } from '@gw/db';
import type { InstanceEventReceived } from '@gw/events';
import { setInstanceWebhook } from '@gw/accounts';
import { useApiFixture, type TestAccount } from '../testing/api-fixture.ts';
import { DEFAULT_INSTANCE_EVENT_BODY_LIMIT_BYTES } from '@gw/config';

// POST /integrations/instances/{instance_id}/events/{token} in-process, over real Postgres, Kafka
// and the registry. The token is the one `gatewayctl instance webhook-url` sets on the manager.
const suite = useApiFixture();
let account: TestAccount;
let other: TestAccount;
let path: string;
let managerInstance: string;

beforeAll(async () => {
  account = await suite.fixture.account();
  other = await suite.fixture.account();
  const hook = await setInstanceWebhook(suite.fixture.runtime.pool, suite.fixture.box, { instanceId: account.instance_id, baseUrl: 'https://gateway.test' });
  path = new URL(hook.webhook_url).pathname;
  managerInstance = hook.manager_instance;
}, 60_000);

async function post(url: string, raw: string) {
  const response = await suite.fixture.app.inject({ method: 'POST', url, headers: { 'content-type': 'application/json' }, payload: raw });
  return { status: response.statusCode, body: response.json() };
}

const envelope = (overrides: Record<string, unknown> = {}) =>
  JSON.stringify({
    event: 'chats.update',
    instance: managerInstance,
    data: [{ remoteJid: '14155550999@s.whatsapp.net', marker: randomUUID() }],
    date_time: new Date().toISOString(),
    apikey: 'the-manager-apikey',
    ...overrides,
  });

const digestOf = (raw: string) => createHash('sha256').update(raw).digest('hex');
const receivedWith = (digest: string) =>
  suite.fixture.records.filter((r) => r.event.type === 'InstanceEventReceived' && r.event.payload.digest === digest).map((r) => r.event.payload as InstanceEventReceived);

/** Every envelope of the customer appended so far has been read once a later one is (one partition, in order). */
async function afterLaterEnvelope(): Promise<void> {
  const raw = envelope();
  expect(await post(path, raw)).toEqual({ status: 200, body: { success: true, status: 'accepted' } });
  await suite.fixture.record((r) => r.event.type === 'InstanceEventReceived' && r.event.payload.digest === digestOf(raw), 'the later envelope');
}

const UNAUTHENTICATED = { success: false, error: 'invalid_api_key', message: 'The instance event could not be authenticated.', details: {} };

describe('instance events: accepted', () => {
  it('appends the envelope as InstanceEventReceived on the customer\'s key, without the manager\'s apikey', async () => {
    const raw = envelope();
    expect(await post(path, raw)).toEqual({ status: 200, body: { success: true, status: 'accepted' } });
    const digest = digestOf(raw);
    const record = await suite.fixture.record((r) => r.event.type === 'InstanceEventReceived' && r.event.payload.digest === digest, 'the envelope');
    expect(record.key).toBe(account.customer_id);
    const { apikey: _apikey, ...kept } = JSON.parse(raw) as Record<string, unknown>;
    expect(record.event.payload).toEqual({
      event_id: expect.any(String),
      correlation_id: expect.any(String),
      occurred_at: expect.any(Number),
      customer_id: account.customer_id,
      instance_id: account.instance_id,
      instance_name: account.instance_name,
      manager_instance: managerInstance,
      event: 'chats.update',
      digest,
      payload: JSON.stringify(kept),
    });
    expect(record.event.payload.correlation_id).toBe(record.event.payload.event_id);
  });

  it('also at the URL with the event name appended (webhookByEvents)', async () => {
    const raw = envelope({ event: 'CALL', data: [{ from: '14155550998@s.whatsapp.net', status: 'offer' }], marker: randomUUID() });
    expect(await post(`${path}/call`, raw)).toEqual({ status: 200, body: { success: true, status: 'accepted' } });
    await suite.fixture.record((r) => r.event.type === 'InstanceEventReceived' && r.event.payload.digest === digestOf(raw), 'the envelope');
  });

  it('a duplicate envelope is acknowledged and not recorded again; concurrent copies are claimed once', async () => {
    const raw = envelope();
    expect(await post(path, raw)).toEqual({ status: 200, body: { success: true, status: 'accepted' } });
    expect(await post(path, raw)).toEqual({ status: 200, body: { success: true, status: 'duplicate' } });

    // Copies arriving together (claimed in one statement, or a few): one is taken.
    const together = envelope();
    const answers = await Promise.all(Array.from({ length: 5 }, () => post(path, together)));
    expect(answers.filter((a) => a.body.status === 'accepted')).toHaveLength(1);
    expect(answers.filter((a) => a.body.status === 'duplicate')).toHaveLength(4);

    await afterLaterEnvelope();
    expect(receivedWith(digestOf(raw))).toHaveLength(1);
    expect(receivedWith(digestOf(together))).toHaveLength(1);
    const claims = await suite.fixture.runtime.pool.oneFirst(
      sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM instance_event_ingest WHERE instance_id = ${account.instance_id} AND digest = ANY(${sql.array([digestOf(raw), digestOf(together)], 'text')})`,
    );
    expect(claims).toBe(2);
  });
});

describe('instance events: refused', () => {
  it('401, one answer for a wrong token, another instance\'s token, an unknown or malformed instance; nothing appended', async () => {
    const token = path.split('/').at(-1)!;
    const raws = Array.from({ length: 5 }, () => envelope());
    const answers = [
      await post(`/integrations/instances/${account.instance_id}/events/not-the-token`, raws[0]!),
      await post(`/integrations/instances/${other.instance_id}/events/${token}`, raws[1]!),
      await post(`/integrations/instances/ins_nope/events/${token}`, raws[2]!),
      await post(`/integrations/instances/${'x'.repeat(65)}/events/${token}`, raws[3]!),
      await post(`/integrations/instances/${account.instance_id}/events/${token.slice(0, -1)}`, raws[4]!),
    ];
    for (const answer of answers) expect(answer).toEqual({ status: 401, body: UNAUTHENTICATED });
    await afterLaterEnvelope();
    for (const raw of raws) expect(receivedWith(digestOf(raw))).toEqual([]);
  });

  it('a token replaced by a new one stops working at once', async () => {
    const hook = await setInstanceWebhook(suite.fixture.runtime.pool, suite.fixture.box, { instanceId: other.instance_id, baseUrl: 'https://gateway.test' });
    const oldPath = new URL(hook.webhook_url).pathname;
    expect((await post(oldPath, envelope({ instance: 'other' }))).status).toBe(200);
    const renewed = await setInstanceWebhook(suite.fixture.runtime.pool, suite.fixture.box, { instanceId: other.instance_id, baseUrl: 'https://gateway.test' });
    expect(await post(oldPath, envelope({ instance: 'other' }))).toEqual({ status: 401, body: UNAUTHENTICATED });
    expect((await post(new URL(renewed.webhook_url).pathname, envelope({ instance: 'other' }))).status).toBe(200);
  });

  it('400 invalid_json for a body that is not JSON, validation_error for JSON that is no envelope', async () => {
    expect(await post(path, '{not json')).toEqual({ status: 400, body: { success: false, error: 'invalid_json', message: 'The request body is not valid JSON.', details: {} } });
    const NOT_AN_EVENT = { status: 400, body: { success: false, error: 'validation_error', message: 'An instance event is a JSON object with a string "event".', details: { field: 'event', rule: 'required' } } };
    for (const raw of ['[1,2]', '"chats.update"', 'null', '{"data":[]}', '{"event":42}']) expect(await post(path, raw)).toEqual(NOT_AN_EVENT);
  });

  it('400 for an envelope that fails the checks, recorded as rejected with its reason (never its values) and not appended', async () => {
    const missingJid = envelope({ event: 'messages.upsert', data: { key: { fromMe: false }, message: { conversation: 'hi' } } });
    const badName = envelope({ event: 'not an event!' });
    const RejectionRow = z.object({ event: z.string(), reason: z.string(), stage: z.string() });
    const rejections = (digest: string) =>
      suite.fixture.runtime.pool.any(sql.type(RejectionRow)`SELECT event, reason, stage FROM instance_event_rejections WHERE instance_id = ${account.instance_id} AND digest = ${digest}`);

    expect(await post(path, missingJid)).toEqual({
      status: 400,
      body: { success: false, error: 'validation_error', message: 'The instance event was rejected: data.key.remoteJid is missing.', details: { reason: 'data.key.remoteJid is missing', digest: digestOf(missingJid) } },
    });
    expect(await rejections(digestOf(missingJid))).toEqual([{ event: 'messages.upsert', reason: 'data.key.remoteJid is missing', stage: 'ingest' }]);
    // The manager's retry of the same envelope is one rejection.
    expect((await post(path, missingJid)).status).toBe(400);
    expect(await rejections(digestOf(missingJid))).toHaveLength(1);

    expect(await post(path, badName)).toMatchObject({ status: 400, body: { error: 'validation_error', details: { reason: 'event is not an event name' } } });
    expect(await rejections(digestOf(badName))).toEqual([{ event: '(invalid)', reason: 'event is not an event name', stage: 'ingest' }]);

    await afterLaterEnvelope();
    expect(receivedWith(digestOf(missingJid))).toEqual([]);
    expect(receivedWith(digestOf(badName))).toEqual([]);
  });

  it('413 payload_too_large over the ingest body limit (32 MiB by default)', async () => {
    const raw = envelope({ data: [{ remoteJid: '14155550999@s.whatsapp.net', pad: 'x'.repeat(DEFAULT_INSTANCE_EVENT_BODY_LIMIT_BYTES) }] });
    expect(await post(path, raw)).toEqual({ status: 413, body: { success: false, error: 'payload_too_large', message: 'The request body is too large.', details: {} } });
  });
});

describe('instance events: what real Evolution servers post', () => {
  it('takes chats.upsert whose data[].id is the manager\'s row id, not a JID', async () => {
    // whatsapp.baileys.service.ts l.1173 (2.3.6): [{ ...existingChat, name: pushName }].
    const raw = envelope({ event: 'chats.upsert', data: [{ id: 'cmfz8q0x30001qk0h7g6l2v1a', remoteJid: '14155550999@s.whatsapp.net', name: 'Ana', unreadMessages: 0, instanceId: randomUUID() }] });
    expect(await post(path, raw)).toEqual({ status: 200, body: { success: true, status: 'accepted' } });
    await suite.fixture.record((r) => r.event.type === 'InstanceEventReceived' && r.event.payload.digest === digestOf(raw), 'the chats.upsert envelope');
  });

  it('takes a media message posted with its base64 (over 1 MiB), recording it without the bytes', async () => {
    const raw = envelope({
      event: 'messages.upsert',
      data: {
        key: { remoteJid: '14155550999@s.whatsapp.net', fromMe: false, id: `IMG${randomUUID()}` },
        messageType: 'imageMessage',
        message: { imageMessage: { caption: 'the receipt', mimetype: 'image/jpeg', jpegThumbnail: Object.fromEntries(Array.from({ length: 2_000 }, (_, i) => [i, i % 256])) }, base64: 'QUJD'.repeat(600_000) },
      },
    });
    expect(raw.length).toBeGreaterThan(2 * 1024 * 1024);
    expect(await post(path, raw)).toEqual({ status: 200, body: { success: true, status: 'accepted' } });
    const record = await suite.fixture.record((r) => r.event.type === 'InstanceEventReceived' && r.event.payload.digest === digestOf(raw), 'the media envelope');
    const recorded = (record.event.payload as InstanceEventReceived).payload;
    expect(recorded.length).toBeLessThan(1_000);
    expect(JSON.parse(recorded).data.message).toEqual({ imageMessage: { caption: 'the receipt', mimetype: 'image/jpeg' } });
  });
});
