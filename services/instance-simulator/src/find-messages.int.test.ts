import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createOpenInstance, startSimulator, type Harness } from './testing/sim-harness.ts';

let sim: Harness;

beforeAll(async () => {
  sim = await startSimulator({ ackDelays: { serverAckMs: 10, deliveryMs: 20, readMs: 30 } });
});
afterAll(async () => {
  await sim.close();
});
beforeEach(async () => {
  await sim.call('DELETE', '/sim/faults');
});

let counter = 0;
const freshName = () => `find-${Date.now()}-${counter++}`;
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const send = (name: string, number: string, text: string) =>
  sim.call('POST', `/message/sendText/${name}`, { body: { number, text } });
const inbound = (name: string, from: string, text: string, push_name = 'Ana') =>
  sim.call('POST', `/sim/instances/${name}/inbound`, { body: { from, text, push_name } });
const find = (name: string, body: unknown, apikey?: string | null) =>
  sim.call('POST', `/chat/findMessages/${name}`, { body, ...(apikey !== undefined ? { apikey } : {}) });
const texts = (answer: { body: { messages: { records: { message: { conversation: string } }[] } } }) =>
  answer.body.messages.records.map((record) => record.message.conversation);

describe('POST /chat/findMessages/{instance}: the message store', () => {
  it('holds sent and received messages with the fields fetchMessages selects, acks as MessageUpdate', async () => {
    const name = freshName();
    await createOpenInstance(sim, name);
    const sent = await send(name, '+1 415 555 0100', 'hello');
    await inbound(name, '14155550100', 'hi back', 'Bob');
    await sim.call('POST', `/sim/instances/${name}/group-message`, {
      body: { group_id: '120363025246125486', participant: '5511977776666', text: 'hi all', push_name: 'Cy' },
    });
    await pause(300); // past the read ack (30 ms), with room for a busy machine

    const found = await find(name, {});

    expect(found.status).toBe(200);
    const { total, pages, currentPage, records } = found.body.messages;
    expect({ total, pages, currentPage }).toEqual({ total: 3, pages: 1, currentPage: 1 });
    const byText = Object.fromEntries(records.map((r: { message: { conversation: string } }) => [r.message.conversation, r]));
    expect(byText.hello).toEqual({
      id: expect.stringMatching(/^cm[0-9a-z]{23}$/),
      key: { remoteJid: '14155550100@s.whatsapp.net', fromMe: true, id: sent.body.key.id },
      pushName: 'Você',
      messageType: 'conversation',
      message: { conversation: 'hello' },
      messageTimestamp: sent.body.messageTimestamp,
      instanceId: sent.body.instanceId,
      source: 'web',
      contextInfo: expect.objectContaining({ mentionedJid: [], disappearingMode: { initiator: 0 } }),
      MessageUpdate: [{ status: 'SERVER_ACK' }, { status: 'DELIVERY_ACK' }, { status: 'READ' }],
    });
    expect(byText['hi back']).toEqual({
      id: expect.any(String),
      key: { remoteJid: '14155550100@s.whatsapp.net', fromMe: false, id: expect.stringMatching(/^[0-9A-F]{32}$/) },
      pushName: 'Bob',
      messageType: 'conversation',
      message: { conversation: 'hi back' },
      messageTimestamp: expect.any(Number),
      instanceId: sent.body.instanceId,
      source: 'android',
      contextInfo: null,
      MessageUpdate: [],
    });
    expect(byText['hi all'].key).toEqual({
      remoteJid: '120363025246125486@g.us',
      fromMe: false,
      id: expect.any(String),
      participant: '5511977776666@s.whatsapp.net',
    });

    // messages.update reports the Message row id as messageId, as Evolution does.
    const updates = await sim.call('GET', `/sim/events?instance=${name}&event=messages.update`);
    expect(updates.body.events[0].data.messageId).toBe(byText.hello.id);
  });

  it('keeps each instance\'s messages apart and drops them with the instance', async () => {
    const a = freshName();
    const b = freshName();
    await createOpenInstance(sim, a);
    await createOpenInstance(sim, b);
    await send(a, '14155550100', 'for a');
    await send(b, '14155550100', 'for b');

    expect(texts(await find(a, {}))).toEqual(['for a']);
    await sim.call('DELETE', `/instance/logout/${a}`);
    expect((await sim.call('DELETE', `/instance/delete/${a}`)).status).toBe(200);
    await createOpenInstance(sim, a);
    expect((await find(a, {})).body.messages.total).toBe(0);
  });

  it('answers while the instance is disconnected (it reads the database only)', async () => {
    const name = freshName();
    await createOpenInstance(sim, name);
    await send(name, '14155550100', 'before the drop');
    await sim.call('POST', `/sim/instances/${name}/disconnect`);

    expect(texts(await find(name, {}))).toEqual(['before the drop']);
  });
});

describe('POST /chat/findMessages/{instance}: a received image', () => {
  it('is stored as received, an imageMessage with its caption, without the webhook\'s base64', async () => {
    const name = freshName();
    await createOpenInstance(sim, name);
    await sim.call('POST', '/webhook/set/' + name, { body: { webhook: { enabled: true, url: 'http://127.0.0.1:9/hook', base64: true, events: ['MESSAGES_UPSERT'] } } });
    const image = Buffer.from('not really a jpeg').toString('base64');
    const posted = await sim.call('POST', `/sim/instances/${name}/inbound`, { body: { from: '14155550100', type: 'image', caption: 'the invoice', mimetype: 'image/jpeg', image_base64: image } });
    expect(posted.status).toBe(200);

    const [row] = (await find(name, { where: { messageType: 'imageMessage' } })).body.messages.records;
    expect(row.messageType).toBe('imageMessage');
    expect(row.message.imageMessage).toMatchObject({ caption: 'the invoice', mimetype: 'image/jpeg' });
    expect(row.message).not.toHaveProperty('conversation');
    expect(row.message).not.toHaveProperty('base64');
  });
});

describe('POST /chat/findMessages/{instance}: filters, order, pages', () => {
  let name: string;
  let sentIds: string[];
  let instanceRows: { id: string; key: { id: string }; messageTimestamp: number; message: { conversation: string } }[];

  beforeAll(async () => {
    name = freshName();
    await createOpenInstance(sim, name);
    const first = await send(name, '14155550100', 'one');
    await pause(1_050); // a later second, so the order is by timestamp and not by ties
    const second = await send(name, '14155550100', 'two');
    const third = await send(name, '14155550199', 'three');
    await inbound(name, '14155550100', 'reply');
    sentIds = [first, second, third].map((sent) => sent.body.key.id);
    instanceRows = (await find(name, {})).body.messages.records;
  });

  it('orders newest first (later stored first within a second)', () => {
    expect(instanceRows.map((row) => row.message.conversation)).toEqual(['reply', 'three', 'two', 'one']);
  });

  it('filters on key.remoteJid, key.id, key.fromMe (only when true), id, source and messageType', async () => {
    expect(texts(await find(name, { where: { key: { remoteJid: '14155550100@s.whatsapp.net' } } }))).toEqual(['reply', 'two', 'one']);
    expect(texts(await find(name, { where: { key: { remoteJid: '14155550100@s.whatsapp.net', fromMe: true } } }))).toEqual(['two', 'one']);
    // fetchMessages applies key.fromMe only when truthy: false filters nothing.
    expect(texts(await find(name, { where: { key: { fromMe: false } } }))).toEqual(['reply', 'three', 'two', 'one']);
    expect(texts(await find(name, { where: { key: { id: sentIds[1] } } }))).toEqual(['two']);
    expect(texts(await find(name, { where: { id: instanceRows[2]!.id } }))).toEqual(['two']);
    expect(texts(await find(name, { where: { source: 'android' } }))).toEqual(['reply']);
    expect(texts(await find(name, { where: { messageType: 'conversation', source: 'web' } }))).toEqual(['three', 'two', 'one']);
    expect(texts(await find(name, { where: { messageType: 'imageMessage' } }))).toEqual([]);
  });

  it('filters on key.participant, and remoteJidAlt never narrows (its OR holds an empty branch)', async () => {
    const group = freshName();
    await createOpenInstance(sim, group);
    for (const [participant, text] of [['5511977776666', 'from x'], ['5511966665555', 'from y']]) {
      await sim.call('POST', `/sim/instances/${group}/group-message`, { body: { group_id: '120363000000000001', participant, text } });
    }

    expect(texts(await find(group, { where: { key: { participant: '5511966665555@s.whatsapp.net' } } }))).toEqual(['from y']);
    expect(texts(await find(group, { where: { key: { remoteJidAlt: 'nobody@s.whatsapp.net' } } }))).toEqual(['from y', 'from x']);
  });

  it('filters on messageTimestamp only when both gte and lte are given, as dates compared in seconds', async () => {
    const oneAt = instanceRows[3]!.messageTimestamp;
    const iso = (seconds: number) => new Date(seconds * 1000).toISOString();

    expect(texts(await find(name, { where: { messageTimestamp: { gte: iso(oneAt), lte: new Date(oneAt * 1000 + 999).toISOString() } } }))).toEqual(['one']);
    expect(texts(await find(name, { where: { messageTimestamp: { gte: iso(oneAt + 1), lte: iso(oneAt + 60) } } }))).not.toContain('one');
    expect(texts(await find(name, { where: { messageTimestamp: { gte: iso(oneAt + 3600) } } }))).toHaveLength(4);
  });

  it('pages with offset (page size) and page, total and pages counting every match', async () => {
    const first = await find(name, { offset: 3 });
    const second = await find(name, { offset: 3, page: 2 });
    const beyond = await find(name, { offset: 3, page: 5 });

    expect(first.body.messages).toMatchObject({ total: 4, pages: 2, currentPage: 1 });
    expect(texts(first)).toEqual(['reply', 'three', 'two']);
    expect(second.body.messages).toMatchObject({ total: 4, pages: 2, currentPage: 2 });
    expect(texts(second)).toEqual(['one']);
    expect(beyond.body.messages).toMatchObject({ total: 4, pages: 2, currentPage: 5, records: [] });
  });

  it('answers 500 where Prisma would refuse the query', async () => {
    const badSource = await find(name, { where: { source: 'fax' } });
    const badDate = await find(name, { where: { messageTimestamp: { gte: 'not a date', lte: 'either' } } });
    const badSize = await find(name, { offset: 2.5 });

    for (const answer of [badSource, badDate, badSize]) {
      expect(answer.status).toBe(500);
      expect(answer.body).toMatchObject({ status: 500, error: 'Internal Server Error' });
    }
  });
});

describe('POST /chat/findMessages/{instance}: guards and validation', () => {
  it('404 for an unknown instance (even with a wrong key), 401 without or with a wrong key', async () => {
    const name = freshName();
    const token = await createOpenInstance(sim, name);
    const other = await createOpenInstance(sim, freshName());

    const unknown = await find('no-such-instance', {}, 'wrong');
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({
      status: 404,
      error: 'Not Found',
      response: { message: ['The "no-such-instance" instance does not exist'] },
    });
    for (const apikey of [null, 'wrong', other]) {
      const refused = await find(name, {}, apikey);
      expect(refused.status).toBe(401);
      expect(refused.body).toEqual({ status: 401, error: 'Unauthorized', response: { message: 'Unauthorized' } });
    }
    expect((await find(name, {}, token)).status).toBe(200);
    expect((await find(name, {})).status).toBe(200); // the global key
  });

  it('400 with messageValidateSchema\'s messages, as one list inside `message`', async () => {
    const name = freshName();
    await createOpenInstance(sim, name);

    const cases: [unknown, string[]][] = [
      [{ where: 'all' }, ['where is not of a type(s) object']],
      [{ where: { key: { remoteJid: '' } } }, ['The property cannot be empty']],
      [{ where: { key: { fromMe: 'yes' } } }, ['where.key.fromMe is not of a type(s) boolean', 'where.key.fromMe is not one of enum values: true,false']],
      [{ where: { key: 'x' } }, ['where.key is not of a type(s) object']],
      [{ where: { _id: '' } }, ['where._id does not meet minimum length of 1', 'The "_id" cannot be empty']],
      [{ limit: 1.5 }, ['limit is not of a type(s) integer']],
    ];
    for (const [body, messages] of cases) {
      const refused = await find(name, body);
      expect(refused.status, JSON.stringify(body)).toBe(400);
      expect(refused.body).toEqual({ status: 400, error: 'Bad Request', response: { message: [messages] } });
    }
    // The schema checks key fields only when every key name is fromMe/remoteJid/id.
    expect((await find(name, { where: { key: { remoteJid: '', participant: 'p' } } })).status).toBe(200);
  });
});

describe('findMessages faults', () => {
  it('find_error_5xx answers 500 for `count` lookups and leaves sendText alone', async () => {
    const name = freshName();
    await createOpenInstance(sim, name);
    const set = await sim.call('PUT', '/sim/faults', { body: { instance: name, mode: 'find_error_5xx', count: 1 } });

    const sent = await send(name, '14155550100', 'still sent');
    const failed = await find(name, {});
    const next = await find(name, {});

    expect(set.status).toBe(200);
    expect(sent.status).toBe(201);
    expect(failed.status).toBe(500);
    expect(failed.body).toMatchObject({ status: 500, error: 'Internal Server Error' });
    expect(texts(next)).toEqual(['still sent']);
  });

  it('find_timeout answers after delay_ms; a sendText fault of the same instance stays in force beside it', async () => {
    const name = freshName();
    await createOpenInstance(sim, name);
    await sim.call('PUT', '/sim/faults', { body: { instance: name, mode: 'find_timeout', delay_ms: 400 } });
    await sim.call('PUT', '/sim/faults', { body: { instance: name, mode: 'error_5xx' } });

    const slow = await find(name, {});
    expect(slow.status).toBe(200);
    expect(slow.elapsedMs).toBeGreaterThanOrEqual(390);
    expect((await send(name, '14155550100', 'x')).status).toBe(500);
    expect((await sim.call('GET', '/sim/faults')).body.faults.map((f: { mode: string }) => f.mode).sort()).toEqual(['error_5xx', 'find_timeout']);

    await sim.call('PUT', '/sim/faults', { body: { instance: name, mode: 'none' } });
    expect((await sim.call('GET', '/sim/faults')).body.faults).toEqual([]);
  });
});

describe('sendText faults `stall` (a slow manager) and `hang_unsent`', () => {
  const stalledSend = (name: string, text: string, signal?: AbortSignal) =>
    fetch(`${sim.baseUrl}/message/sendText/${name}`, {
      method: 'POST',
      headers: { apikey: sim.globalKey, 'content-type': 'application/json' },
      body: JSON.stringify({ number: '14155550100', text }),
      ...(signal ? { signal } : {}),
    });

  it('stall: a send whose client left is carried out anyway when the slow part ends: ledger, store and send.message', async () => {
    const name = freshName();
    await createOpenInstance(sim, name);
    await sim.call('PUT', '/sim/faults', { body: { instance: name, mode: 'stall', delay_ms: 300 } });

    const abort = new AbortController();
    const pending = stalledSend(name, 'sent after the client left', abort.signal);
    await pause(100);
    abort.abort();
    await expect(pending).rejects.toThrow();
    // Not yet sent while the manager is still at it...
    expect((await sim.call('GET', `/sim/ledger?instance=${name}`)).body.messages).toEqual([]);
    expect((await find(name, {})).body.messages.total).toBe(0);
    await pause(400); // ...sent, stored and posted once it is done
    expect((await sim.call('GET', `/sim/ledger?instance=${name}`)).body.messages.map((m: { text: string }) => m.text)).toEqual(['sent after the client left']);
    expect(texts(await find(name, {}))).toEqual(['sent after the client left']);
    expect((await sim.call('GET', `/sim/events?instance=${name}&event=send.message`)).body.events).toHaveLength(1);
  });

  it('stall: a client that waits gets its 201 after delay_ms, and the message is recorded', async () => {
    const name = freshName();
    await createOpenInstance(sim, name);
    await sim.call('PUT', '/sim/faults', { body: { instance: name, mode: 'stall', delay_ms: 300 } });

    const started = performance.now();
    const pending = stalledSend(name, 'accepted late');
    await pause(150);
    const ledgerDuringStall = await sim.call('GET', `/sim/ledger?instance=${name}`);
    const answer = await pending;
    const body = await answer.json();

    expect(ledgerDuringStall.body.messages).toEqual([]);
    expect(answer.status).toBe(201);
    expect(performance.now() - started).toBeGreaterThanOrEqual(290);
    expect((await sim.call('GET', `/sim/ledger?instance=${name}`)).body.messages.map((m: { id: string }) => m.id)).toEqual([body.key.id]);
    expect(texts(await find(name, {}))).toEqual(['accepted late']);
  });

  it('hang_unsent (not a real Evolution behaviour): a client that leaves leaves no trace', async () => {
    const name = freshName();
    await createOpenInstance(sim, name);
    await sim.call('PUT', '/sim/faults', { body: { instance: name, mode: 'hang_unsent', delay_ms: 300 } });

    const abort = new AbortController();
    const pending = stalledSend(name, 'never accepted', abort.signal);
    await pause(100);
    abort.abort();
    await expect(pending).rejects.toThrow();
    await pause(400); // past the hang

    expect((await sim.call('GET', `/sim/ledger?instance=${name}`)).body.messages).toEqual([]);
    expect((await find(name, {})).body.messages.total).toBe(0);
    expect((await sim.call('GET', `/sim/events?instance=${name}&event=send.message`)).body.events).toEqual([]);
  });
});

describe('storing new messages (Evolution DATABASE_SAVE_DATA_NEW_MESSAGE)', () => {
  it('off for an instance: sends still go out (ledger, 201) but findMessages finds nothing, as Evolution answers with an empty table', async () => {
    const name = freshName();
    const other = freshName();
    await createOpenInstance(sim, name);
    await createOpenInstance(sim, other);
    expect((await sim.call('PUT', '/sim/storage', { body: { instance: name, save_new_messages: false } })).body).toMatchObject({ instances: { [name]: false } });
    try {
      expect((await send(name, '14155550100', 'not kept')).status).toBe(201);
      await inbound(name, '14155550100', 'not kept either');
      await send(other, '14155550100', 'kept');
      expect((await sim.call('GET', `/sim/ledger?instance=${name}`)).body.messages).toHaveLength(1);
      const answer = await find(name, { where: { key: { fromMe: true } } });
      expect(answer.status).toBe(200);
      expect(answer.body.messages).toEqual({ total: 0, pages: 0, currentPage: 1, records: [] });
      expect(texts(await find(other, {}))).toEqual(['kept']);
    } finally {
      await sim.call('PUT', '/sim/storage', { body: { instance: name, save_new_messages: true } });
    }
  });

  it('is off by default, as in Evolution\'s env.config.ts (the test harness turns it on, as its .env.example does)', async () => {
    const bare = await startSimulator({ saveNewMessages: undefined });
    try {
      expect((await bare.call('GET', '/sim/storage')).body).toEqual({ save_new_messages: false, instances: {} });
    } finally {
      await bare.close();
    }
    expect((await sim.call('GET', '/sim/storage')).body.save_new_messages).toBe(true);
  });

  it('refuses a setting that is not a boolean', async () => {
    const answer = await sim.call('PUT', '/sim/storage', { body: { save_new_messages: 'yes' } });
    expect(answer.status).toBe(400);
  });
});
