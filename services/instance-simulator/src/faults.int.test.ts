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
const freshName = () => `fault-${Date.now()}-${counter++}`;
const send = (name: string, text = 'hi') =>
  sim.call('POST', `/message/sendText/${name}`, { body: { number: '5511912345678', text } });

describe('fault injection on sendText', () => {
  it('error_5xx answers 500 and accepts nothing', async () => {
    const name = freshName();
    await createOpenInstance(sim, name);
    const set = await sim.call('PUT', '/sim/faults', { body: { instance: name, mode: 'error_5xx' } });

    const sent = await send(name);

    expect(set.status).toBe(200);
    expect(sent.status).toBe(500);
    expect(sent.body).toMatchObject({ status: 500, error: 'Internal Server Error' });
    expect((await sim.call('GET', `/sim/ledger?instance=${name}`)).body.messages).toEqual([]);
  });

  it('unknown_number answers 400 exists:false for any number and accepts nothing', async () => {
    const name = freshName();
    await createOpenInstance(sim, name);
    await sim.call('PUT', '/sim/faults', { body: { instance: name, mode: 'unknown_number' } });

    const sent = await send(name);

    expect(sent.status).toBe(400);
    expect(sent.body.response.message[0]).toMatchObject({ exists: false, jid: '5511912345678@s.whatsapp.net' });
    expect((await sim.call('GET', '/sim/ledger')).body.messages).toEqual([]);
  });

  it('timeout records the message in the ledger before the (delayed) answer', async () => {
    const name = freshName();
    await createOpenInstance(sim, name);
    await sim.call('PUT', '/sim/faults', { body: { instance: name, mode: 'timeout', delay_ms: 400 } });

    const pending = send(name, 'maybe sent');
    await new Promise((resolve) => setTimeout(resolve, 150));
    const ledgerWhileWaiting = await sim.call('GET', `/sim/ledger?instance=${name}`);
    const sent = await pending;

    expect(ledgerWhileWaiting.body.messages).toHaveLength(1);
    expect(ledgerWhileWaiting.body.messages[0].text).toBe('maybe sent');
    expect(sent.elapsedMs).toBeGreaterThanOrEqual(390);
    expect(sent.status).toBe(201);
    expect(sent.body.key.id).toBe(ledgerWhileWaiting.body.messages[0].id);
  });

  it('count limits how many sends fail, then sends go through again', async () => {
    const name = freshName();
    await createOpenInstance(sim, name);
    await sim.call('PUT', '/sim/faults', { body: { instance: name, mode: 'error_5xx', count: 2 } });

    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await send(name, `m${i}`)).status);

    expect(statuses).toEqual([500, 500, 201, 201]);
    const ledger = await sim.call('GET', `/sim/ledger?instance=${name}`);
    expect(ledger.body.messages.map((m: { text: string }) => m.text)).toEqual(['m2', 'm3']);
    expect((await sim.call('GET', '/sim/faults')).body.faults).toEqual([]);
  });

  it('a fault without instance applies to every instance; an instance rule wins over it', async () => {
    const a = freshName();
    const b = freshName();
    await createOpenInstance(sim, a);
    await createOpenInstance(sim, b);
    await sim.call('PUT', '/sim/faults', { body: { mode: 'error_5xx' } });
    await sim.call('PUT', '/sim/faults', { body: { instance: b, mode: 'unknown_number' } });

    expect((await send(a)).status).toBe(500);
    expect((await send(b)).status).toBe(400);

    await sim.call('DELETE', '/sim/faults');
    expect((await send(a)).status).toBe(201);
  });

  it('rejects an invalid fault body and needs the global key', async () => {
    const bad = await sim.call('PUT', '/sim/faults', { body: { mode: 'explode' } });
    const noKey = await sim.call('GET', '/sim/faults', { apikey: 'wrong' });

    expect(bad.status).toBe(400);
    expect(noKey.status).toBe(401);
  });
});

describe('shutdown during a delayed answer', () => {
  it('close() releases a pending timeout-fault send instead of waiting 30 s', async () => {
    const own = await startSimulator();
    await createOpenInstance(own, 'slow');
    await own.call('PUT', '/sim/faults', { body: { mode: 'timeout' } });

    const pending = own.call('POST', '/message/sendText/slow', { body: { number: '14155550100', text: 'x' } });
    await new Promise((resolve) => setTimeout(resolve, 100));
    const started = performance.now();
    await own.close();
    const answered = await pending;

    expect(performance.now() - started).toBeLessThan(2_000);
    expect(answered.status).toBe(201);
  });
});
