import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createOpenInstance, startSimulator, type Harness } from './testing/sim-harness.ts';

let sim: Harness;

beforeAll(async () => {
  sim = await startSimulator();
});
afterAll(async () => {
  await sim.close();
});
beforeEach(async () => {
  await sim.call('DELETE', '/sim/faults');
  await sim.call('DELETE', '/sim/ledger');
});

let counter = 0;
const freshName = () => `inst-${Date.now()}-${counter++}`;

describe('POST /message/sendText/{instance}', () => {
  it('create → pair → send answers 201 PENDING and the ledger holds exactly that message', async () => {
    const name = freshName();
    const token = await createOpenInstance(sim, name);

    const sent = await sim.call('POST', `/message/sendText/${name}`, {
      apikey: token,
      body: { number: '+1 (415) 555-0100', text: 'hello there' },
    });

    expect(sent.status).toBe(201);
    expect(sent.body.key).toEqual({ remoteJid: '14155550100@s.whatsapp.net', fromMe: true, id: expect.any(String) });
    expect(sent.body.key.id).toMatch(/^3EB0[0-9A-F]{18}$/);
    expect(sent.body.status).toBe('PENDING');
    expect(sent.body.message).toEqual({ conversation: 'hello there' });
    expect(sent.body.messageType).toBe('conversation');
    expect(sent.body.source).toBe('web');
    expect(Math.abs(sent.body.messageTimestamp - Date.now() / 1000)).toBeLessThan(5);

    const state = await sim.call('GET', `/instance/connectionState/${name}`, { apikey: token });
    const fetched = await sim.call('GET', `/instance/fetchInstances?instanceName=${name}`);
    expect(state.body).toEqual({ instance: { instanceName: name, state: 'open' } });
    expect(sent.body.instanceId).toBe(fetched.body[0].id);

    const ledger = await sim.call('GET', `/sim/ledger?instance=${name}`);
    expect(ledger.body.messages).toEqual([
      {
        id: sent.body.key.id,
        instance: name,
        number: '+1 (415) 555-0100',
        remote_jid: '14155550100@s.whatsapp.net',
        text: 'hello there',
        received_at: expect.any(String),
      },
    ]);
  });

  it('rejects a wrong apikey with 401 in Evolution shape and records nothing', async () => {
    const name = freshName();
    await createOpenInstance(sim, name);

    const sent = await sim.call('POST', `/message/sendText/${name}`, {
      apikey: 'not-the-key',
      body: { number: '14155550100', text: 'x' },
    });
    const missing = await sim.call('POST', `/message/sendText/${name}`, {
      apikey: null,
      body: { number: '14155550100', text: 'x' },
    });

    expect(sent.status).toBe(401);
    expect(sent.body).toEqual({ status: 401, error: 'Unauthorized', response: { message: 'Unauthorized' } });
    expect(missing.status).toBe(401);
    expect((await sim.call('GET', '/sim/ledger')).body.messages).toEqual([]);
  });

  it("accepts another instance's token only for that instance", async () => {
    const a = freshName();
    const b = freshName();
    const tokenA = await createOpenInstance(sim, a);
    await createOpenInstance(sim, b);

    const sent = await sim.call('POST', `/message/sendText/${b}`, {
      apikey: tokenA,
      body: { number: '14155550100', text: 'x' },
    });

    expect(sent.status).toBe(401);
  });

  it('answers 404 for an unknown instance', async () => {
    const sent = await sim.call('POST', '/message/sendText/nobody-here', {
      body: { number: '14155550100', text: 'x' },
    });

    expect(sent.status).toBe(404);
    expect(sent.body).toEqual({
      status: 404,
      error: 'Not Found',
      response: { message: ['The "nobody-here" instance does not exist'] },
    });
  });

  it('refuses to send on an instance that is not open', async () => {
    const name = freshName();
    const created = await sim.call('POST', '/instance/create', { body: { instanceName: name } });
    const closedSend = await sim.call('POST', `/message/sendText/${name}`, {
      body: { number: '14155550100', text: 'x' },
    });

    await sim.call('POST', `/sim/instances/${name}/pair`);
    await sim.call('POST', `/sim/instances/${name}/disconnect`);
    const afterDisconnect = await sim.call('POST', `/message/sendText/${name}`, {
      apikey: created.body.hash,
      body: { number: '14155550100', text: 'x' },
    });

    expect(closedSend.status).toBe(400);
    expect(closedSend.body).toEqual({
      status: 400,
      error: 'Bad Request',
      response: { message: ['Error: Connection Closed'] },
    });
    expect(afterDisconnect.status).toBe(400);
    expect((await sim.call('GET', '/sim/ledger')).body.messages).toEqual([]);
  });

  it('answers 400 exists:false for a number that is not on WhatsApp, without a ledger entry', async () => {
    const name = freshName();
    await createOpenInstance(sim, name);

    const sent = await sim.call('POST', `/message/sendText/${name}`, {
      body: { number: '+999 123 4567', text: 'x' },
    });

    expect(sent.status).toBe(400);
    expect(sent.body).toEqual({
      status: 400,
      error: 'Bad Request',
      response: { message: [{ exists: false, jid: '9991234567@s.whatsapp.net', number: '9991234567' }] },
    });
    expect((await sim.call('GET', '/sim/ledger')).body.messages).toEqual([]);
  });

  it('types for `delay` ms before it sends, and answers only then (sendMessageWithTyping)', async () => {
    const name = freshName();
    await createOpenInstance(sim, name);

    const started = Date.now();
    const sent = await sim.call('POST', `/message/sendText/${name}`, { body: { number: '14155550100', text: 'typed first', delay: 400 } });
    const took = Date.now() - started;

    expect(sent.status).toBe(201);
    expect(took).toBeGreaterThanOrEqual(400);
    const [entry] = (await sim.call('GET', `/sim/ledger?instance=${name}`)).body.messages;
    expect(entry).toMatchObject({ text: 'typed first', typing_ms: 400 });
    // Accepted once the typing was done, not when the request came.
    expect(Date.parse(entry.received_at)).toBeGreaterThanOrEqual(started + 400);
    const badDelay = await sim.call('POST', `/message/sendText/${name}`, { body: { number: '14155550100', text: 'x', delay: 1.5 } });
    expect(badDelay.status).toBe(400);
  });

  it('fails a send whose socket closes while it types (400 Connection Closed), sending nothing', async () => {
    const name = freshName();
    await createOpenInstance(sim, name);

    const sending = sim.call('POST', `/message/sendText/${name}`, { body: { number: '14155550100', text: 'cut off while typing', delay: 500 } });
    await new Promise((r) => setTimeout(r, 100));
    await sim.call('POST', `/sim/instances/${name}/disconnect`);
    const sent = await sending;

    expect(sent.status).toBe(400);
    expect(sent.body.response.message).toEqual(['Error: Connection Closed']);
    expect((await sim.call('GET', `/sim/ledger?instance=${name}`)).body.messages).toEqual([]);
  });

  it('validates the body like Evolution (400 when text is missing)', async () => {
    const name = freshName();
    await createOpenInstance(sim, name);

    const sent = await sim.call('POST', `/message/sendText/${name}`, { body: { number: '14155550100' } });

    expect(sent.status).toBe(400);
    expect(sent.body.response.message).toEqual(['instance requires property "text"']);
  });
});
