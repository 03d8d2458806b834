import { createHash, randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import pino from 'pino';
import { beforeAll, describe, expect, it } from 'vitest';
import { sql, z } from '@gw/db';
import type { InstanceEventReceived } from '@gw/events';
import { setInstanceWebhook } from '@gw/accounts';
import { useApiFixture, type TestAccount } from '../../../../test/support/api/api-fixture.ts';
import { DEFAULT_INSTANCE_EVENT_BODY_LIMIT_BYTES } from '@gw/config';
import { errorHandlerPlugin } from '../plugins/error-handler.ts';
import { instanceEventsRoutes } from './route.ts';

// POST /integrations/instances/{instance_id}/events in-process, over real Postgres, Kafka and the
// registry. The token is the one `gatewayctl instance webhook-url` sets on the manager, as the
// webhook's Authorization header (read back from the manager, as Evolution stores it).
const suite = useApiFixture();
let account: TestAccount;
let other: TestAccount;
let path: string;
let token: string;
let managerInstance: string;

/** The token the manager was given for the instance's webhook (its stored `headers`). */
async function managerToken(instance: string): Promise<string> {
  const found = await suite.fixture.simulator.call('GET', `/webhook/find/${instance}`);
  const authorization = (found.body as { headers: Record<string, string> | null }).headers?.Authorization ?? '';
  return authorization.replace(/^Bearer /, '');
}

beforeAll(async () => {
  account = await suite.fixture.account();
  other = await suite.fixture.account();
  const hook = await setInstanceWebhook(suite.fixture.runtime.pool, suite.fixture.box, { instanceId: account.instance_id, baseUrl: 'https://gateway.test' });
  path = new URL(hook.webhook_url).pathname;
  managerInstance = hook.manager_instance;
  token = await managerToken(managerInstance);
}, 60_000);

/** With the instance's token in the header, as the manager posts; `bearer: null` for none (the older form). */
async function post(url: string, raw: string, bearer: string | null = token, app: FastifyInstance = suite.fixture.app) {
  const headers: Record<string, string> = { 'content-type': 'application/json', ...(bearer !== null ? { authorization: `Bearer ${bearer}` } : {}) };
  const response = await app.inject({ method: 'POST', url, headers, payload: raw });
  return { status: response.statusCode, body: response.json() as Record<string, unknown>, ...(response.headers['retry-after'] !== undefined ? { retryAfter: response.headers['retry-after'] } : {}) };
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
  it('401, one answer for a wrong token, another instance\'s token, an unknown or malformed instance, no token; nothing appended', async () => {
    const otherHook = await setInstanceWebhook(suite.fixture.runtime.pool, suite.fixture.box, { instanceId: other.instance_id, baseUrl: 'https://gateway.test' });
    const otherToken = await managerToken(otherHook.manager_instance);
    const raws = Array.from({ length: 8 }, () => envelope());
    const answers = [
      await post(path, raws[0]!, 'not-the-token'),
      await post(path, raws[1]!, otherToken),
      await post('/integrations/instances/ins_nope/events', raws[2]!),
      await post(`/integrations/instances/${'x'.repeat(65)}/events`, raws[3]!),
      await post(path, raws[4]!, token.slice(0, -1)),
      await post(path, raws[5]!, null),
      // A header that is not a bearer token is not read past; the path is then no token either.
      (await suite.fixture.app.inject({ method: 'POST', url: `${path}/${token}`, headers: { 'content-type': 'application/json', authorization: `Basic ${token}` }, payload: raws[6]! })),
      await post(`/integrations/instances/${account.instance_id}/events/${otherToken}`, raws[7]!, null),
    ].map((a) => ('statusCode' in a ? { status: a.statusCode, body: a.json() as unknown } : a));
    for (const answer of answers) expect(answer).toEqual({ status: 401, body: UNAUTHENTICATED });
    await afterLaterEnvelope();
    for (const raw of raws) expect(receivedWith(digestOf(raw))).toEqual([]);
  });

  it('a token replaced by a new one stops working at once', async () => {
    const hook = await setInstanceWebhook(suite.fixture.runtime.pool, suite.fixture.box, { instanceId: other.instance_id, baseUrl: 'https://gateway.test' });
    const oldToken = await managerToken(hook.manager_instance);
    const otherPath = new URL(hook.webhook_url).pathname;
    expect((await post(otherPath, envelope({ instance: 'other' }), oldToken)).status).toBe(200);
    await setInstanceWebhook(suite.fixture.runtime.pool, suite.fixture.box, { instanceId: other.instance_id, baseUrl: 'https://gateway.test' });
    const renewed = await managerToken(hook.manager_instance);
    expect(renewed).not.toBe(oldToken);
    expect(await post(otherPath, envelope({ instance: 'other' }), oldToken)).toEqual({ status: 401, body: UNAUTHENTICATED });
    expect(await post(`${otherPath}/${oldToken}`, envelope({ instance: 'other' }), null)).toEqual({ status: 401, body: UNAUTHENTICATED });
    expect((await post(otherPath, envelope({ instance: 'other' }), renewed)).status).toBe(200);
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

describe('instance events: the token in a header, not in the URL', () => {
  it('the manager is given a URL without the token, and the token as the webhook\'s Authorization header', async () => {
    expect(path).toBe(`/integrations/instances/${account.instance_id}/events`);
    const found = (await suite.fixture.simulator.call('GET', `/webhook/find/${managerInstance}`)).body as { url: string; headers: Record<string, string> };
    expect(found.url).toBe(`https://gateway.test${path}`);
    expect(found.url).not.toContain(token);
    expect(found.headers).toEqual({ Authorization: `Bearer ${token}` });
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('takes the header form with Evolution\'s byEvents suffix too', async () => {
    const raw = envelope({ event: 'CALL', data: [{ from: '14155550998@s.whatsapp.net', status: 'offer' }] });
    expect(await post(`${path}/call`, raw)).toEqual({ status: 200, body: { success: true, status: 'accepted' } });
  });

  it('still takes the token in the path (instances configured before), unless configured to refuse it', async () => {
    const raw = envelope();
    expect(await post(`${path}/${token}`, raw, null)).toEqual({ status: 200, body: { success: true, status: 'accepted' } });
    expect(await post(`${path}/${token}/messages-upsert`, envelope(), null)).toEqual({ status: 200, body: { success: true, status: 'accepted' } });
    await suite.fixture.record((r) => r.event.type === 'InstanceEventReceived' && r.event.payload.digest === digestOf(raw), 'the envelope posted the older way');

    const strict = await suite.fixture.build({ instanceEvents: { pathTokens: 'refuse' } });
    try {
      expect(await post(`${path}/${token}`, envelope(), null, strict)).toEqual({ status: 401, body: UNAUTHENTICATED });
      expect(await post(path, envelope(), token, strict)).toEqual({ status: 200, body: { success: true, status: 'accepted' } });
    } finally {
      await strict.close();
    }
  });
});

describe('instance events: rate limit per instance', () => {
  it('past the burst, 429 webhook_rate_limited with Retry-After; the same envelope retried later is taken, not a duplicate', async () => {
    const limited = await suite.fixture.build({ instanceEvents: { rate: { perSecond: 1, burst: 2 } } });
    try {
      // Requests without the instance's token spend nothing of its budget.
      for (let i = 0; i < 5; i++) expect((await post(path, envelope(), 'not-the-token', limited)).status).toBe(401);
      expect((await post(path, envelope(), token, limited)).status).toBe(200);
      expect((await post(path, envelope(), token, limited)).status).toBe(200);
      const refused = envelope();
      expect(await post(path, refused, token, limited)).toEqual({
        status: 429,
        retryAfter: '1',
        body: { success: false, error: 'webhook_rate_limited', message: 'Too many instance events for this instance; slow down.', details: {} },
      });
      // Another instance has its own budget.
      const otherHook = await setInstanceWebhook(suite.fixture.runtime.pool, suite.fixture.box, { instanceId: other.instance_id, baseUrl: 'https://gateway.test' });
      expect((await post(new URL(otherHook.webhook_url).pathname, envelope({ instance: 'other' }), await managerToken(otherHook.manager_instance), limited)).status).toBe(200);
      // Evolution retries a 429 (not among its non-retryable statuses) after at least 5 s: by then the bucket has refilled.
      await new Promise((resolve) => setTimeout(resolve, 1_100));
      expect(await post(path, refused, token, limited)).toEqual({ status: 200, body: { success: true, status: 'accepted' } });
      await suite.fixture.record((r) => r.event.type === 'InstanceEventReceived' && r.event.payload.digest === digestOf(refused), 'the retried envelope');
    } finally {
      await limited.close();
    }
  });
});

describe('instance events: logs', () => {
  const capture = () => {
    const lines: string[] = [];
    const sink = new Writable({ write: (chunk, _encoding, done) => { lines.push(String(chunk)); done(); } });
    return { lines, logger: pino({ level: 'trace' }, sink) };
  };

  it('never hold the token, in either form, whatever the answer; the older form is warned about by instance id', async () => {
    const { lines, logger } = capture();
    const logged = await suite.fixture.build({ logger, instanceEvents: { rate: { perSecond: 1, burst: 3 } } });
    try {
      expect((await post(path, envelope(), token, logged)).status).toBe(200);
      expect((await post(`${path}/${token}`, envelope(), null, logged)).status).toBe(200);
      expect((await post(`${path}/${token}/call`, envelope(), null, logged)).status).toBe(200);
      expect((await post(path, envelope(), token, logged)).status).toBe(429);
      expect((await post(path, envelope(), `${token.slice(0, -2)}xx`, logged)).status).toBe(401);
      expect((await post(`${path}/${token.slice(0, -2)}xx`, envelope(), null, logged)).status).toBe(401);
      expect((await post(path, '{not json', token, logged)).status).toBe(429);
      const warnings = lines.filter((line) => line.includes('token in the URL'));
      expect(warnings).toHaveLength(1);
      expect(JSON.parse(warnings[0]!)).toMatchObject({ instance_id: account.instance_id });
      const all = lines.join('');
      expect(all).not.toContain(token);
      expect(all).not.toContain(token.slice(0, -2));
    } finally {
      await logged.close();
    }
  });

  it('fastify\'s own request log, where it is on, shows the path without the token', async () => {
    const { lines, logger } = capture();
    // The route's own logger settings under request logging (the API turns it off; a host app may not).
    const app = Fastify({ loggerInstance: logger as FastifyBaseLogger }) as unknown as FastifyInstance;
    await app.register(errorHandlerPlugin);
    await app.register(instanceEventsRoutes, { pool: suite.fixture.runtime.pool, kafka: suite.fixture.runtime.kafka, codec: suite.fixture.runtime.codec });
    try {
      expect((await post(`${path}/${token}`, envelope(), null, app)).status).toBe(200);
      expect((await post(`${path}/${token}/messages-upsert`, envelope(), null, app)).status).toBe(200);
      expect(lines.filter((line) => line.includes('incoming request'))).toHaveLength(2);
      expect(lines.join('')).toContain(`${path}/[redacted]`);
      expect(lines.join('')).not.toContain(token);
    } finally {
      await app.close();
    }
  });
});
