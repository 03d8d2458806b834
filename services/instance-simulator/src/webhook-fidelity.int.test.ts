import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EvolutionVersion } from './evolution-version.ts';
import { startSimulator, type Harness } from './testing/sim-harness.ts';
import { startWebhookReceiver, type WebhookReceiver } from './testing/webhook-receiver.ts';

// What a real Evolution posts, per release (README: "Behaviour → real source"): concurrent,
// independently retried posts; LID keys; media with/without base64; chat rows; QR limit; closes.

const VERSIONS: EvolutionVersion[] = ['2.3.6', '2.3.7', '2.4.0-rc2'];
const sims = new Map<EvolutionVersion, Harness>();
let receiver: WebhookReceiver;

beforeAll(async () => {
  receiver = await startWebhookReceiver();
  for (const version of VERSIONS) {
    sims.set(version, await startSimulator({ evolutionVersion: version, webhookRetry: { maxAttempts: 10, initialDelayMs: 150, maxDelayMs: 400, timeoutMs: 2000 } }));
  }
});
afterAll(async () => {
  for (const sim of sims.values()) await sim.close();
  await receiver.close();
});

let counter = 0;
const OWNER = '5511988887777';
const PHONE = '5511955554444';
const LID = '123456789012345';
const sim = (version: EvolutionVersion = '2.3.7') => sims.get(version)!;
const eventsOf = (name: string) => receiver.accepted().filter((hook) => hook.body.instance === name).map((hook) => hook.body);
const waitEvent = (name: string, predicate: (body: any) => boolean, count = 1) =>
  receiver.waitFor((hook) => hook.body.instance === name && predicate(hook.body), count);

async function openInstance(version: EvolutionVersion = '2.3.7', webhook: Record<string, unknown> = {}) {
  const name = `fid-${version}-${Date.now()}-${counter++}`;
  const created = await sim(version).call('POST', '/instance/create', {
    body: { instanceName: name, webhook: { url: `${receiver.url}/hooks/${name}`, ...webhook } },
  });
  expect(created.status).toBe(201);
  await sim(version).call('GET', `/instance/connect/${name}`, { apikey: created.body.hash });
  await sim(version).call('POST', `/sim/instances/${name}/pair`, { body: { number: OWNER, profileName: 'Shop' } });
  await waitEvent(name, (body) => body.event === 'connection.update' && body.data.state === 'open');
  return { name, token: created.body.hash as string };
}

describe('dispatch as webhook.controller.ts: each event posted and retried on its own', () => {
  it('a retried SERVER_ACK arrives after DELIVERY_ACK and READ; a retried connecting after open', async () => {
    const name = `fid-order-${Date.now()}`;
    const failed = new Map<string, number>();
    // The receiver refuses the first two posts of `connecting` and of SERVER_ACK, accepts the rest.
    receiver.answer = (hook) => {
      const body = hook.body;
      const tag = body.instance !== name ? null : body.event === 'connection.update' && body.data.state === 'connecting' ? 'connecting' : body.data?.status === 'SERVER_ACK' ? 'server' : null;
      if (tag && (failed.get(tag) ?? 0) < 2) {
        failed.set(tag, (failed.get(tag) ?? 0) + 1);
        return { status: 503 };
      }
      return { status: 200 };
    };
    try {
      const created = await sim().call('POST', '/instance/create', { body: { instanceName: name, webhook: { url: `${receiver.url}/hooks/${name}` } } });
      await sim().call('GET', `/instance/connect/${name}`, { apikey: created.body.hash });
      await sim().call('POST', `/sim/instances/${name}/pair`, { body: { number: OWNER } });
      await sim().call('PUT', '/sim/acks', { body: { server_ms: 10, delivery_ms: 30, read_ms: 50 } });
      await sim().call('POST', `/message/sendText/${name}`, { apikey: created.body.hash, body: { number: '5511912345678', text: 'x' } });
      await waitEvent(name, (body) => body.data?.status === 'SERVER_ACK');
      const settled = await sim().call('GET', '/sim/webhooks/settled?timeout_ms=10000');

      expect(settled.body).toEqual({ settled: true, pending: 0 });
      const states = eventsOf(name).filter((body) => body.event === 'connection.update').map((body) => body.data.state);
      expect(states).toEqual(['open', 'connecting']);
      const acks = eventsOf(name).filter((body) => body.event === 'messages.update').map((body) => body.data.status);
      expect(acks).toEqual(['DELIVERY_ACK', 'READ', 'SERVER_ACK']);
      const tries = receiver.received.filter((hook) => hook.body.instance === name && hook.body.data?.status === 'SERVER_ACK');
      expect(tries.map((hook) => hook.answered)).toEqual([503, 503, 200]);
      // Never below the initial delay (retryWebhookRequest's Math.max(initialDelay, ...)).
      expect(tries[1]!.at - tries[0]!.at).toBeGreaterThanOrEqual(140);
    } finally {
      receiver.answer = () => ({ status: 200 });
      await sim().call('PUT', '/sim/acks', { body: { server_ms: 50, delivery_ms: 150, read_ms: 300 } });
    }
  });
});

describe('messages.upsert per release', () => {
  it('a LID sender with a number: 2.3.6 keeps Baileys key, 2.3.7 overwrites remoteJid, 2.4.0-rc2 swaps', async () => {
    const keys: Record<string, unknown> = {};
    for (const version of VERSIONS) {
      const { name } = await openInstance(version);
      const sent = await sim(version).call('POST', `/sim/instances/${name}/inbound`, { body: { from: PHONE, lid: LID, text: 'hi', push_name: 'Ana' } });
      const [hook] = await waitEvent(name, (body) => body.event === 'messages.upsert');
      expect(hook!.body.data.key.id).toBe(sent.body.message.id);
      const { id: _id, ...key } = hook!.body.data.key;
      keys[version] = key;
    }
    expect(keys).toEqual({
      '2.3.6': { remoteJid: `${LID}@lid`, remoteJidAlt: `${PHONE}@s.whatsapp.net`, fromMe: false, addressingMode: 'lid' },
      '2.3.7': { remoteJid: `${PHONE}@s.whatsapp.net`, remoteJidAlt: `${PHONE}@s.whatsapp.net`, fromMe: false, addressingMode: 'lid' },
      '2.4.0-rc2': { remoteJid: `${PHONE}@s.whatsapp.net`, remoteJidAlt: `${LID}@lid`, fromMe: false, addressingMode: 'pn' },
    });
  });

  it('a LID sender without a number keeps remoteJid @lid in every release', async () => {
    for (const version of VERSIONS) {
      const { name } = await openInstance(version);
      await sim(version).call('POST', `/sim/instances/${name}/inbound`, { body: { lid: `${LID}@lid`, text: 'hi' } });
      const [hook] = await waitEvent(name, (body) => body.event === 'messages.upsert');
      expect(hook!.body.data.key).toEqual({ remoteJid: `${LID}@lid`, fromMe: false, id: expect.any(String), addressingMode: 'lid' });
    }
  });

  it('an extendedTextMessage is posted flattened into conversation', async () => {
    const { name } = await openInstance();
    const sent = await sim().call('POST', `/sim/instances/${name}/inbound`, { body: { from: PHONE, type: 'extended_text', text: 'see https://example.com' } });
    const [hook] = await waitEvent(name, (body) => body.event === 'messages.upsert');
    expect(sent.body.message.content).toEqual({ type: 'extendedTextMessage', text: 'see https://example.com' });
    expect(hook!.body.data).toMatchObject({ messageType: 'conversation', message: { conversation: 'see https://example.com' } });
    expect(hook!.body.data.message.extendedTextMessage).toBeUndefined();
  });

  it('an image with caption carries message.base64 only when the webhook has base64 on', async () => {
    const image = Buffer.from('not really a png').toString('base64');
    const posted: Record<string, any> = {};
    for (const base64 of [true, false]) {
      const { name } = await openInstance('2.3.7', { base64 });
      await sim().call('POST', `/sim/instances/${name}/inbound`, { body: { from: PHONE, type: 'image', caption: 'the invoice', mimetype: 'image/jpeg', image_base64: image } });
      const [hook] = await waitEvent(name, (body) => body.event === 'messages.upsert');
      posted[String(base64)] = hook!.body.data;
    }
    expect(posted.true.messageType).toBe('imageMessage');
    expect(posted.true.message.base64).toBe(image);
    expect(posted.true.message.imageMessage).toMatchObject({
      mimetype: 'image/jpeg',
      caption: 'the invoice',
      fileLength: { low: Buffer.from(image, 'base64').length, high: 0, unsigned: true },
      fileSha256: expect.objectContaining({ '0': expect.any(Number) }),
    });
    expect(posted.false.message.base64).toBeUndefined();
    expect(posted.false.message.imageMessage.caption).toBe('the invoice');
  });

  it('a group message from a LID member: participant @lid, participantAlt its number', async () => {
    const { name } = await openInstance();
    await sim().call('POST', `/sim/instances/${name}/group-message`, { body: { group_id: '120363025246125486', participant: PHONE, participant_lid: LID, text: 'hi all' } });
    const [hook] = await waitEvent(name, (body) => body.event === 'messages.upsert');
    expect(hook!.body.data.key).toEqual({
      remoteJid: '120363025246125486@g.us',
      fromMe: false,
      id: expect.any(String),
      participant: `${LID}@lid`,
      participantAlt: `${PHONE}@s.whatsapp.net`,
      addressingMode: 'lid',
    });
  });

  it('a call from a LID posts from and chatId @lid', async () => {
    const { name } = await openInstance();
    await sim().call('POST', `/sim/instances/${name}/call`, { body: { lid: LID, missed: true, ring_ms: 10 } });
    const [hook] = await waitEvent(name, (body) => body.event === 'call' && body.data.status === 'offer');
    expect(hook!.body.data).toMatchObject({ from: `${LID}@lid`, chatId: `${LID}@lid`, status: 'offer' });
  });
});

describe('messages.update, edits, deletes and chats', () => {
  it('the business reading a received message on its phone posts READ with fromMe false, then chats.upsert unread 0', async () => {
    const { name } = await openInstance();
    const inbound = await sim().call('POST', `/sim/instances/${name}/inbound`, { body: { from: PHONE, text: 'hello' } });
    await sim().call('POST', `/sim/instances/${name}/messages/${inbound.body.message.id}/read`);
    const [update] = await waitEvent(name, (body) => body.event === 'messages.update');
    await waitEvent(name, (body) => body.event === 'chats.upsert' && body.data[0].unreadMessages === 0);
    expect(update!.body.data).toEqual({
      messageId: expect.stringMatching(/^c[0-9a-z]+$/),
      keyId: inbound.body.message.id,
      remoteJid: `${PHONE}@s.whatsapp.net`,
      fromMe: false,
      status: 'READ',
      instanceId: expect.any(String),
    });
  });

  it('a known chat whose contact changes push name posts chats.upsert with the Chat row id and no jid', async () => {
    const { name } = await openInstance();
    await sim().call('POST', `/sim/instances/${name}/inbound`, { body: { from: PHONE, text: 'one', push_name: 'Ana' } });
    await sim().call('POST', `/sim/instances/${name}/inbound`, { body: { from: PHONE, text: 'two', push_name: 'Ana Maria' } });
    const [hook] = await waitEvent(name, (body) => body.event === 'chats.upsert' && body.data[0].id !== undefined);
    expect(hook!.body.data).toEqual([{ id: expect.stringMatching(/^c[0-9a-z]{24}$/), name: 'Ana Maria' }]);
  });

  it('an edit posts messages.edited and messages.update SERVER_ACK with the new text', async () => {
    const { name } = await openInstance();
    const inbound = await sim().call('POST', `/sim/instances/${name}/inbound`, { body: { from: PHONE, text: 'helo' } });
    await sim().call('POST', `/sim/instances/${name}/messages/${inbound.body.message.id}/edit`, { body: { text: 'hello' } });
    const [edited] = await waitEvent(name, (body) => body.event === 'messages.edited');
    const [update] = await waitEvent(name, (body) => body.event === 'messages.update');
    expect(edited!.body.data).toEqual({
      key: { remoteJid: `${OWNER}@s.whatsapp.net`, fromMe: true, id: inbound.body.message.id },
      type: 'MESSAGE_EDIT',
      editedMessage: { conversation: 'hello' },
      timestampMs: expect.stringMatching(/^\d+$/),
    });
    expect(update!.body.data).toMatchObject({ keyId: inbound.body.message.id, fromMe: false, status: 'SERVER_ACK', message: { editedMessage: { message: { conversation: 'hello' } } } });
  });

  it('a delete posts messages.delete: the key alone in 2.3.6, with status DELETED after', async () => {
    const deletes: Record<string, unknown> = {};
    for (const version of VERSIONS) {
      const { name } = await openInstance(version);
      const inbound = await sim(version).call('POST', `/sim/instances/${name}/inbound`, { body: { from: PHONE, text: 'oops' } });
      await sim(version).call('POST', `/sim/instances/${name}/messages/${inbound.body.message.id}/delete`);
      const [hook] = await waitEvent(name, (body) => body.event === 'messages.delete');
      await waitEvent(name, (body) => body.event === 'messages.edited' && body.data.type === 'REVOKE');
      const { id, ...rest } = hook!.body.data;
      expect(id).toBe(inbound.body.message.id);
      deletes[version] = rest;
    }
    const key = { remoteJid: `${PHONE}@s.whatsapp.net`, fromMe: false, addressingMode: 'pn' };
    expect(deletes).toEqual({ '2.3.6': key, '2.3.7': { ...key, status: 'DELETED' }, '2.4.0-rc2': { ...key, status: 'DELETED' } });
  });

  it('an injected ERROR on one of our sends (a refusal such as 463) posts messages.update with status only, no code and no participant', async () => {
    const { name, token } = await openInstance();
    await sim().call('PUT', '/sim/acks', { body: { server_ms: null } });
    try {
      const sent = await sim().call('POST', `/message/sendText/${name}`, { apikey: token, body: { number: '5511912345678', text: 'x' } });
      const injected = await sim().call('POST', `/sim/instances/${name}/messages/${sent.body.key.id}/status`, { body: { status: 'ERROR' } });
      const [hook] = await waitEvent(name, (body) => body.event === 'messages.update');
      expect(injected.status).toBe(200);
      expect(hook!.body.data).toEqual({
        messageId: expect.any(String),
        keyId: sent.body.key.id,
        remoteJid: sent.body.key.remoteJid,
        fromMe: true,
        status: 'ERROR',
        instanceId: sent.body.instanceId,
      });
    } finally {
      await sim().call('PUT', '/sim/acks', { body: { server_ms: 50, delivery_ms: 150, read_ms: 300 } });
    }
  });
});

describe('connection', () => {
  it('the QR limit posts {message, statusCode: 500}, then connection.update refused 428; the instance is left close', async () => {
    const name = `fid-qr-${Date.now()}`;
    const created = await sim().call('POST', '/instance/create', { body: { instanceName: name, webhook: { url: `${receiver.url}/hooks/${name}` } } });
    await sim().call('GET', `/instance/connect/${name}`, { apikey: created.body.hash });
    const limit = await sim().call('POST', `/sim/instances/${name}/qr-limit`);
    const [qr] = await waitEvent(name, (body) => body.event === 'qrcode.updated' && body.data.statusCode === 500);
    const [refused] = await waitEvent(name, (body) => body.event === 'connection.update' && body.data.state === 'refused');
    const state = await sim().call('GET', `/instance/connectionState/${name}`, { apikey: created.body.hash });

    expect(limit.status).toBe(200);
    expect(qr!.body.data).toEqual({ message: 'QR code limit reached, please login again', statusCode: 500 });
    expect(refused!.body.data).toEqual({ instance: name, state: 'refused', statusReason: 428 });
    expect(state.body.instance.state).toBe('close');
  });

  it('a 401 or 403 close posts status.instance and logout.instance beside the close', async () => {
    for (const reason of [401, 403]) {
      const { name } = await openInstance();
      await sim().call('POST', `/sim/instances/${name}/disconnect`, { body: { status_reason: reason } });
      const [status] = await waitEvent(name, (body) => body.event === 'status.instance');
      await waitEvent(name, (body) => body.event === 'logout.instance' && body.data === null);
      const [close] = await waitEvent(name, (body) => body.event === 'connection.update' && body.data.state === 'close');
      expect(status!.body.data).toMatchObject({ instance: name, status: 'closed', disconnectionReasonCode: reason, disconnectionObject: expect.any(String) });
      expect(close!.body.data).toEqual({ instance: name, state: 'close', statusReason: reason });
    }
  });

  it('a 408 close: 2.4.0-rc2 gives up and posts the close; 2.3.7 reconnects without one', async () => {
    const rc2 = await openInstance('2.4.0-rc2');
    const given = await sim('2.4.0-rc2').call('POST', `/sim/instances/${rc2.name}/disconnect`, { body: { status_reason: 408 } });
    expect(given.body.instance.state).toBe('close');
    const [close] = await waitEvent(rc2.name, (body) => body.event === 'connection.update' && body.data.state === 'close');
    expect(close!.body.data).toEqual({ instance: rc2.name, state: 'close', statusReason: 408 });
    const old = await openInstance('2.3.7');
    const reconnecting = await sim('2.3.7').call('POST', `/sim/instances/${old.name}/disconnect`, { body: { status_reason: 408, reconnect_ms: 0 } });
    expect(reconnecting.body.instance.state).toBe('connecting');
  });

  it('2.4.0-rc2 adds its tracking headers to every post', async () => {
    const { name } = await openInstance('2.4.0-rc2');
    const [hook] = await waitEvent(name, (body) => body.event === 'connection.update' && body.data.state === 'open');
    expect(hook!.headers).toMatchObject({ 'x-instance-name': name, 'x-event-type': 'connection.update', 'user-agent': 'EvolutionAPI-Webhook/2.3.7' });
    const [old] = await waitEvent((await openInstance('2.3.7')).name, (body) => body.event === 'connection.update');
    expect(old!.headers['x-instance-name']).toBeUndefined();
  });
});
