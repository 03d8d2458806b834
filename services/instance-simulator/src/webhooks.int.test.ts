import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startSimulator, type Harness } from './testing/sim-harness.ts';
import { startWebhookReceiver, type ReceivedWebhook, type WebhookReceiver } from './testing/webhook-receiver.ts';

let sim: Harness;
let receiver: WebhookReceiver;

beforeAll(async () => {
  sim = await startSimulator({ webhookRetry: { maxAttempts: 4, initialDelayMs: 20, maxDelayMs: 100, timeoutMs: 2000 } });
  receiver = await startWebhookReceiver();
});
afterAll(async () => {
  await sim.close();
  await receiver.close();
});
beforeEach(async () => {
  await sim.call('DELETE', '/sim/faults');
  await sim.call('PUT', '/sim/acks', { body: { server_ms: 50, delivery_ms: 150, read_ms: 300 } });
});

let counter = 0;
const freshName = () => `hook-${Date.now()}-${counter++}`;
const OWNER = '5511988887777';

/** Events of one instance that the receiver accepted, in arrival order. */
const eventsOf = (name: string) =>
  receiver.accepted().filter((hook) => hook.body.instance === name).map((hook) => hook.body);
const waitEvent = (name: string, predicate: (body: any) => boolean, count = 1) =>
  receiver.waitFor((hook) => hook.body.instance === name && predicate(hook.body), count);

/** Creates an instance whose webhook (given at create, like Evolution allows) posts to the receiver. */
async function createWithWebhook(name: string, webhook: Record<string, unknown> = {}): Promise<string> {
  const created = await sim.call('POST', '/instance/create', {
    body: { instanceName: name, webhook: { url: `${receiver.url}/hooks/${name}`, ...webhook } },
  });
  expect(created.status).toBe(201);
  return created.body.hash as string;
}

async function createOpenWithWebhook(name: string, webhook: Record<string, unknown> = {}): Promise<string> {
  const token = await createWithWebhook(name, webhook);
  await sim.call('GET', `/instance/connect/${name}`, { apikey: token });
  const paired = await sim.call('POST', `/sim/instances/${name}/pair`, { body: { number: OWNER, profileName: 'Shop' } });
  expect(paired.status).toBe(200);
  await waitEvent(name, (body) => body.event === 'connection.update' && body.data.state === 'open');
  return token;
}

describe('webhook configuration', () => {
  it('/webhook/set stores the Evolution row (201) and /webhook/find returns it; find is null before', async () => {
    const name = freshName();
    const created = await sim.call('POST', '/instance/create', { body: { instanceName: name } });
    const token = created.body.hash;

    const before = await sim.call('GET', `/webhook/find/${name}`, { apikey: token });
    const set = await sim.call('POST', `/webhook/set/${name}`, {
      apikey: token,
      body: {
        webhook: {
          enabled: true,
          url: `${receiver.url}/set`,
          headers: { authorization: 'Bearer abc' },
          byEvents: false,
          base64: false,
          events: ['MESSAGES_UPSERT', 'CONNECTION_UPDATE'],
        },
      },
    });
    const found = await sim.call('GET', `/webhook/find/${name}`, { apikey: token });

    expect(before).toMatchObject({ status: 200, body: null });
    expect(set.status).toBe(201);
    expect(set.body).toMatchObject({
      url: `${receiver.url}/set`,
      headers: { authorization: 'Bearer abc' },
      enabled: true,
      events: ['MESSAGES_UPSERT', 'CONNECTION_UPDATE'],
      webhookByEvents: false,
      webhookBase64: false,
      instanceId: created.body.instance.instanceId,
    });
    expect(found.body).toEqual(set.body);
  });

  it('enabled without events subscribes to all; disabled to none; bad bodies are 400', async () => {
    const name = freshName();
    await sim.call('POST', '/instance/create', { body: { instanceName: name } });

    const all = await sim.call('POST', `/webhook/set/${name}`, { body: { webhook: { enabled: true, url: receiver.url } } });
    const off = await sim.call('POST', `/webhook/set/${name}`, {
      body: { webhook: { enabled: false, url: receiver.url, events: ['CALL'] } },
    });
    const badUrl = await sim.call('POST', `/webhook/set/${name}`, { body: { webhook: { enabled: true, url: 'nope' } } });
    const badEvent = await sim.call('POST', `/webhook/set/${name}`, {
      body: { webhook: { enabled: true, url: receiver.url, events: ['NOT_AN_EVENT'] } },
    });
    const noWebhook = await sim.call('POST', `/webhook/set/${name}`, { body: {} });
    const wrongKey = await sim.call('POST', `/webhook/set/${name}`, {
      apikey: 'wrong',
      body: { webhook: { enabled: true, url: receiver.url } },
    });

    expect(all.body.events).toEqual(expect.arrayContaining(['MESSAGES_UPSERT', 'SEND_MESSAGE', 'CALL', 'QRCODE_UPDATED']));
    expect(off.body).toMatchObject({ enabled: false, events: [] });
    expect(badUrl.status).toBe(400);
    expect(badUrl.body.response.message).toEqual(['Invalid "url" property']);
    expect(badEvent.status).toBe(400);
    expect(noWebhook.status).toBe(400);
    expect(wrongKey.status).toBe(401);
  });
});

describe('events posted to the webhook', () => {
  it('pairing emits connecting, qrcode.updated (PNG data URI) then connection.update open, with headers and envelope', async () => {
    const name = freshName();
    const token = await createWithWebhook(name, { headers: { 'x-hook-secret': 's3cret' } });

    const connect = await sim.call('GET', `/instance/connect/${name}`, { apikey: token });
    await sim.call('POST', `/sim/instances/${name}/pair`, { body: { number: OWNER, profileName: 'Shop' } });
    const [openHook] = await waitEvent(name, (body) => body.event === 'connection.update' && body.data.state === 'open');

    expect(connect.body.base64).toMatch(/^data:image\/png;base64,/);
    const png = Buffer.from(connect.body.base64.split(',')[1], 'base64');
    expect(png.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));

    const events = eventsOf(name).map((body) => `${body.event}${body.data.state ? ':' + body.data.state : ''}`);
    expect(events).toEqual(['instance.create', 'connection.update:connecting', 'qrcode.updated', 'connection.update:open']);

    const qr = eventsOf(name).find((body) => body.event === 'qrcode.updated');
    expect(qr.data).toEqual({
      qrcode: { instance: name, pairingCode: null, code: connect.body.code, base64: connect.body.base64 },
    });
    const open = openHook!.body;
    expect(open).toMatchObject({
      event: 'connection.update',
      instance: name,
      destination: `${receiver.url}/hooks/${name}`,
      sender: `${OWNER}@s.whatsapp.net`,
      server_url: sim.baseUrl,
      apikey: token,
      data: {
        instance: name,
        wuid: `${OWNER}@s.whatsapp.net`,
        profileName: 'Shop',
        profilePictureUrl: null,
        state: 'open',
        statusReason: 200,
      },
    });
    expect(new Date(open.date_time).toString()).not.toBe('Invalid Date');
    expect(openHook!.headers['x-hook-secret']).toBe('s3cret');
    expect(openHook!.headers['content-type']).toMatch(/^application\/json/);
    expect(openHook!.path).toBe(`/hooks/${name}`);
  });

  it('a send posts send.message, then messages.update SERVER_ACK → DELIVERY_ACK → READ in order', async () => {
    const name = freshName();
    const token = await createOpenWithWebhook(name);

    const sent = await sim.call('POST', `/message/sendText/${name}`, {
      apikey: token,
      body: { number: '5511912345678', text: 'order shipped' },
    });
    expect(sent.status).toBe(201);
    await waitEvent(name, (body) => body.event === 'messages.update' && body.data.status === 'READ');

    const flow = eventsOf(name).filter((body) => body.event === 'send.message' || body.event === 'messages.update');
    expect(flow.map((body) => body.data.status)).toEqual(['PENDING', 'SERVER_ACK', 'DELIVERY_ACK', 'READ']);
    expect(flow[0].data).toEqual(sent.body);
    for (const update of flow.slice(1)) {
      expect(update.data).toEqual({
        messageId: flow[1].data.messageId,
        keyId: sent.body.key.id,
        remoteJid: sent.body.key.remoteJid,
        fromMe: true,
        participant: sent.body.key.remoteJid,
        status: update.data.status,
        instanceId: sent.body.instanceId,
      });
    }
    const conversation = await sim.call('GET', `/sim/instances/${name}/conversation`);
    expect(conversation.body.outbound[0]).toMatchObject({ id: sent.body.key.id, status: 'READ' });
  });

  it('the ack_error fault accepts the send but ends the message in ERROR', async () => {
    const name = freshName();
    const token = await createOpenWithWebhook(name);
    await sim.call('PUT', '/sim/faults', { body: { instance: name, mode: 'ack_error', count: 1 } });

    const sent = await sim.call('POST', `/message/sendText/${name}`, {
      apikey: token,
      body: { number: '5511912345678', text: 'doomed' },
    });
    await waitEvent(name, (body) => body.event === 'messages.update' && body.data.status === 'ERROR');
    await new Promise((resolve) => setTimeout(resolve, 400));

    expect(sent.status).toBe(201);
    const statuses = eventsOf(name)
      .filter((body) => body.event === 'messages.update')
      .map((body) => body.data.status);
    expect(statuses).toEqual(['ERROR']);
  });

  it('PUT /sim/acks changes the delays; null stops the progression', async () => {
    const name = freshName();
    const token = await createOpenWithWebhook(name);
    const set = await sim.call('PUT', '/sim/acks', { body: { server_ms: 10, delivery_ms: 20, read_ms: null } });
    const bad = await sim.call('PUT', '/sim/acks', { body: { server_ms: -1 } });

    await sim.call('POST', `/message/sendText/${name}`, { apikey: token, body: { number: '5511912345678', text: 'x' } });
    await waitEvent(name, (body) => body.event === 'messages.update' && body.data.status === 'DELIVERY_ACK');
    await new Promise((resolve) => setTimeout(resolve, 150));

    expect(set.body).toEqual({ server_ms: 10, delivery_ms: 20, read_ms: null });
    expect(bad.status).toBe(400);
    const statuses = eventsOf(name)
      .filter((body) => body.event === 'messages.update')
      .map((body) => body.data.status);
    expect(statuses).toEqual(['SERVER_ACK', 'DELIVERY_ACK']);
  });

  it('an inbound text posts messages.upsert (fromMe false) and chats.upsert, then chats.update', async () => {
    const name = freshName();
    await createOpenWithWebhook(name);

    const first = await sim.call('POST', `/sim/instances/${name}/inbound`, {
      body: { from: '+1 415 555 0100', text: 'hi, is it in stock?', push_name: 'Ana' },
    });
    await sim.call('POST', `/sim/instances/${name}/inbound`, { body: { from: '14155550100', text: 'hello?' } });
    await waitEvent(name, (body) => body.event === 'chats.update');

    expect(first.status).toBe(200);
    const upserts = eventsOf(name).filter((body) => body.event === 'messages.upsert');
    expect(upserts).toHaveLength(2);
    expect(upserts[0].data).toEqual({
      key: { remoteJid: '14155550100@s.whatsapp.net', fromMe: false, id: first.body.message.id, addressingMode: 'pn' },
      pushName: 'Ana',
      status: 'DELIVERY_ACK',
      message: { conversation: 'hi, is it in stock?' },
      messageType: 'conversation',
      messageTimestamp: first.body.message.timestamp,
      instanceId: expect.any(String),
      source: 'android',
    });
    // Posted concurrently, as Evolution does: arrival order is not guaranteed.
    const chats = eventsOf(name).filter((body) => body.event.startsWith('chats.'));
    expect(chats.map((body) => body.event).sort()).toEqual(['chats.update', 'chats.upsert']);
    expect(chats.find((body) => body.event === 'chats.upsert').data).toEqual([
      { remoteJid: '14155550100@s.whatsapp.net', instanceId: expect.any(String), name: 'Ana', unreadMessages: 1 },
    ]);
  });

  it('a group message has an @g.us remoteJid and key.participant, after groups.upsert', async () => {
    const name = freshName();
    await createOpenWithWebhook(name);

    const sent = await sim.call('POST', `/sim/instances/${name}/group-message`, {
      body: { group_id: '120363025246125486', participant: '5511977776666', text: 'hi all' },
    });
    await waitEvent(name, (body) => body.event === 'chats.upsert');

    expect(sent.status).toBe(200);
    const events = eventsOf(name).filter((body) => body.event !== 'connection.update' && body.event !== 'qrcode.updated');
    expect(events.map((body) => body.event).sort()).toEqual(['chats.upsert', 'groups.upsert', 'instance.create', 'messages.upsert']);
    const upsert = events.find((body) => body.event === 'messages.upsert');
    expect(upsert.data.key).toEqual({
      remoteJid: '120363025246125486@g.us',
      fromMe: false,
      id: sent.body.message.id,
      participant: '5511977776666@s.whatsapp.net',
      addressingMode: 'pn',
    });
    expect(upsert.data.message).toEqual({ conversation: 'hi all' });
    expect(events.find((body) => body.event === 'groups.upsert').data[0]).toMatchObject({ id: '120363025246125486@g.us', participants: expect.any(Array) });
  });

  it('a group subject change posts groups.update', async () => {
    const name = freshName();
    await createOpenWithWebhook(name);

    await sim.call('POST', `/sim/instances/${name}/group-update`, {
      body: { group_id: '120363025246125486@g.us', subject: 'Launch team', author: '5511977776666' },
    });
    const [hook] = await waitEvent(name, (body) => body.event === 'groups.update');

    expect(hook!.body.data).toEqual([
      { id: '120363025246125486@g.us', subject: 'Launch team', author: '5511977776666@s.whatsapp.net' },
    ]);
  });

  it('a missed call posts offer then timeout; an answered one offer, accept, terminate', async () => {
    const name = freshName();
    await createOpenWithWebhook(name);

    const missed = await sim.call('POST', `/sim/instances/${name}/call`, {
      body: { from: '5511966665555', missed: true, ring_ms: 20 },
    });
    await waitEvent(name, (body) => body.event === 'call' && body.data.status === 'timeout');
    const answered = await sim.call('POST', `/sim/instances/${name}/call`, {
      body: { from: '5511966665555', missed: false, ring_ms: 20, talk_ms: 20 },
    });
    await waitEvent(name, (body) => body.event === 'call' && body.data.status === 'terminate');

    const calls = eventsOf(name).filter((body) => body.event === 'call').map((body) => body.data);
    expect(calls.map((call) => `${call.id === missed.body.call.id ? 'missed' : 'answered'}:${call.status}`)).toEqual([
      'missed:offer',
      'missed:timeout',
      'answered:offer',
      'answered:accept',
      'answered:terminate',
    ]);
    expect(calls[0]).toEqual({
      chatId: '5511966665555@s.whatsapp.net',
      from: '5511966665555@s.whatsapp.net',
      isGroup: false,
      id: missed.body.call.id,
      date: expect.any(String),
      isVideo: false,
      status: 'offer',
      offline: false,
    });
    expect(answered.body.call.id).not.toBe(missed.body.call.id);
  });

  it('logout and the disconnect fault post connection.update close; a 428 reconnects without one', async () => {
    const name = freshName();
    const token = await createOpenWithWebhook(name);

    await sim.call('DELETE', `/instance/logout/${name}`, { apikey: token });
    await waitEvent(name, (body) => body.event === 'connection.update' && body.data.state === 'close');

    await sim.call('POST', `/sim/instances/${name}/pair`);
    await waitEvent(name, (body) => body.event === 'connection.update' && body.data.state === 'open', 2);
    // Evolution reconnects after connectionClosed (2.3.7 l.426-430): connecting, open, no close.
    await sim.call('POST', `/sim/instances/${name}/disconnect`, { body: { status_reason: 428, reconnect_ms: 20 } });
    await waitEvent(name, (body) => body.event === 'connection.update' && body.data.state === 'open', 3);

    await sim.call('POST', `/sim/instances/${name}/pair`);
    await sim.call('PUT', '/sim/faults', { body: { instance: name, mode: 'disconnect', count: 1 } });
    const sent = await sim.call('POST', `/message/sendText/${name}`, {
      apikey: token,
      body: { number: '5511912345678', text: 'lost' },
    });
    const closes = await waitEvent(name, (body) => body.event === 'connection.update' && body.data.state === 'close', 2);
    const state = await sim.call('GET', `/instance/connectionState/${name}`, { apikey: token });

    expect(sent.status).toBe(400);
    expect(sent.body.response.message).toEqual(['Error: Connection Closed']);
    expect(state.body.instance.state).toBe('close');
    expect(closes.map((hook) => hook.body.data)).toEqual([
      { instance: name, state: 'close', statusReason: 401 },
      { instance: name, state: 'close', statusReason: 401 },
    ]);
    const connecting = eventsOf(name).filter((body) => body.event === 'connection.update' && body.data.state === 'connecting');
    expect(connecting.map((body) => body.data.statusReason)).toEqual([200, 200]);
    expect((await sim.call('GET', `/sim/ledger?instance=${name}`)).body.messages).toEqual([]);
  });
});

describe('delivery', () => {
  it('retries when the receiver fails once, and the event arrives once accepted', async () => {
    const name = freshName();
    await createOpenWithWebhook(name);
    receiver.failNext(1, 503);

    await sim.call('POST', `/sim/instances/${name}/inbound`, { body: { from: '5511955554444', text: 'retry me' } });
    await waitEvent(name, (body) => body.event === 'messages.upsert');

    const attempts = receiver.received.filter(
      (hook: ReceivedWebhook) => hook.body.instance === name && hook.body.event === 'messages.upsert',
    );
    expect(attempts.map((hook) => hook.answered)).toEqual([503, 200]);
    expect(attempts[1]!.body).toEqual(attempts[0]!.body);
    const deliveries = await sim.call('GET', `/sim/webhooks/deliveries?instance=${name}`);
    expect(deliveries.body.deliveries.find((d: { event: string }) => d.event === 'messages.upsert')).toMatchObject({
      state: 'delivered',
      attempts: 2,
      last_status: 200,
    });
  });

  it('does not retry a non-retryable 400, and keeps the order of later events', async () => {
    const name = freshName();
    await createOpenWithWebhook(name);
    receiver.failNext(1, 400);

    await sim.call('POST', `/sim/instances/${name}/inbound`, { body: { from: '5511955554444', text: 'one' } });
    await sim.call('POST', `/sim/instances/${name}/inbound`, { body: { from: '5511955554444', text: 'two' } });
    await waitEvent(name, (body) => body.event === 'chats.update');

    const upserts = receiver.received.filter((hook) => hook.body.instance === name && hook.body.event === 'messages.upsert');
    expect(upserts.map((hook) => `${hook.answered}:${hook.body.data.message.conversation}`)).toEqual(['400:one', '200:two']);
  });

  it('byEvents appends the event to the URL; only subscribed events are posted', async () => {
    const name = freshName();
    await createOpenWithWebhook(name, { byEvents: true, events: ['MESSAGES_UPSERT', 'CONNECTION_UPDATE'] });

    await sim.call('POST', `/sim/instances/${name}/inbound`, { body: { from: '5511955554444', text: 'by event' } });
    const [hook] = await waitEvent(name, (body) => body.event === 'messages.upsert');

    expect(hook!.path).toBe(`/hooks/${name}/messages-upsert`);
    expect(eventsOf(name).map((body) => body.event)).toEqual(['connection.update', 'connection.update', 'messages.upsert']);
    // Every event is still in the simulator's log, subscribed or not.
    const log = await sim.call('GET', `/sim/events?instance=${name}&event=chats.upsert`);
    expect(log.body.events).toHaveLength(1);
  });

  it('never holds up the request that caused the event, even with an unreachable webhook', async () => {
    const name = freshName();
    const created = await sim.call('POST', '/instance/create', {
      body: { instanceName: name, webhook: { url: 'http://127.0.0.1:9/unreachable' } },
    });
    const pair = await sim.call('POST', `/sim/instances/${name}/pair`);
    const sent = await sim.call('POST', `/message/sendText/${name}`, {
      apikey: created.body.hash,
      body: { number: '5511912345678', text: 'fast' },
    });

    expect(pair.status).toBe(200);
    expect(sent.status).toBe(201);
    // Held up, it would wait out ten retries (about 11 s at the default backoff); the margin is
    // for a loaded machine (int files run two at a time on two cores).
    expect(sent.elapsedMs).toBeLessThan(2_000);
  });

  it('inbound on an instance that is not open is refused', async () => {
    const name = freshName();
    await createWithWebhook(name);
    const inbound = await sim.call('POST', `/sim/instances/${name}/inbound`, { body: { from: '5511955554444', text: 'x' } });
    const noKey = await sim.call('POST', `/sim/instances/${name}/inbound`, {
      apikey: null,
      body: { from: '5511955554444', text: 'x' },
    });
    expect(inbound.status).toBe(400);
    expect(noKey.status).toBe(401);
  });
});
