import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startSimulator, type Harness } from './testing/sim-harness.ts';

let sim: Harness;

beforeAll(async () => {
  sim = await startSimulator();
});
afterAll(async () => {
  await sim.close();
});

describe('instance lifecycle', () => {
  it('create answers 201 with the Evolution shape and the given token as hash', async () => {
    const created = await sim.call('POST', '/instance/create', {
      body: { instanceName: 'life-1', token: 'my-token', integration: 'WHATSAPP-BAILEYS' },
    });

    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      instance: { instanceName: 'life-1', integration: 'WHATSAPP-BAILEYS', status: 'created' },
      hash: 'my-token',
      settings: { rejectCall: false, groupsIgnore: false },
    });
    expect(created.body.instance.instanceId).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('a taken name is 403, a missing name 400, a non-global key 401', async () => {
    await sim.call('POST', '/instance/create', { body: { instanceName: 'life-2' } });

    const again = await sim.call('POST', '/instance/create', { body: { instanceName: 'life-2' } });
    const noName = await sim.call('POST', '/instance/create', { body: {} });
    const badKey = await sim.call('POST', '/instance/create', { body: { instanceName: 'life-3' }, apikey: 'x' });

    expect(again.status).toBe(403);
    expect(again.body.response.message).toEqual(['This name "life-2" is already in use.']);
    expect(noName.status).toBe(400);
    expect(badKey.status).toBe(401);
  });

  it('walks close → connecting → open → close through connect, pair and logout', async () => {
    const created = await sim.call('POST', '/instance/create', { body: { instanceName: 'life-4' } });
    const token = created.body.hash;
    const state = async () =>
      (await sim.call('GET', '/instance/connectionState/life-4', { apikey: token })).body.instance.state;

    expect(await state()).toBe('close');
    const connect = await sim.call('GET', '/instance/connect/life-4?number=5511912345678', { apikey: token });
    expect(connect.status).toBe(200);
    expect(connect.body).toMatchObject({ pairingCode: expect.stringMatching(/^[A-Z0-9]{8}$/), count: 1 });
    expect(connect.body.code).toMatch(/^2@/);
    expect(await state()).toBe('connecting');

    await sim.call('POST', '/sim/instances/life-4/pair');
    expect(await state()).toBe('open');
    const whenOpen = await sim.call('GET', '/instance/connect/life-4', { apikey: token });
    expect(whenOpen.body).toEqual({ instance: { instanceName: 'life-4', state: 'open' } });

    const logout = await sim.call('DELETE', '/instance/logout/life-4', { apikey: token });
    expect(logout.body).toEqual({ status: 'SUCCESS', error: false, response: { message: 'Instance logged out' } });
    // The logout completes after the answer (2.3.x does not await it).
    await vi.waitFor(async () => expect(await state()).toBe('close'), { timeout: 2000, interval: 50 });
    expect((await sim.call('DELETE', '/instance/logout/life-4')).status).toBe(400);

    const deleted = await sim.call('DELETE', '/instance/delete/life-4');
    expect(deleted.body).toEqual({ status: 'SUCCESS', error: false, response: { message: 'Instance deleted' } });
    expect((await sim.call('GET', '/instance/connectionState/life-4')).status).toBe(404);
  });

  it('fetchInstances lists all with the global key, only its own with an instance token', async () => {
    const a = await sim.call('POST', '/instance/create', { body: { instanceName: 'life-5' } });
    await sim.call('POST', '/instance/create', { body: { instanceName: 'life-6' } });

    const all = await sim.call('GET', '/instance/fetchInstances');
    const own = await sim.call('GET', '/instance/fetchInstances', { apikey: a.body.hash });
    const one = await sim.call('GET', '/instance/fetchInstances?instanceName=life-6');
    const missing = await sim.call('GET', '/instance/fetchInstances?instanceName=nope');

    expect(all.body.map((i: { name: string }) => i.name)).toEqual(expect.arrayContaining(['life-5', 'life-6']));
    expect(own.body.map((i: { name: string }) => i.name)).toEqual(['life-5']);
    expect(own.body[0]).toMatchObject({ connectionStatus: 'close', token: a.body.hash, integration: 'WHATSAPP-BAILEYS' });
    expect(one.body).toHaveLength(1);
    expect(missing.status).toBe(404);
  });

  it('serves health without auth, the welcome smoke and Evolution-style 404s', async () => {
    const health = await sim.call('GET', '/sim/health', { apikey: null });
    const root = await sim.call('GET', '/', { apikey: null });
    const unknown = await sim.call('GET', '/no/such/route');

    expect(health).toMatchObject({ status: 200, body: { ok: true } });
    expect(root.body).toMatchObject({ status: 200, message: 'Welcome to the Evolution API, it is working!' });
    expect(unknown.status).toBe(404);
    expect(unknown.body.response.message).toEqual(['Cannot GET /no/such/route']);
  });
});
