import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectInstance, connectionState, createInstance, deleteInstance, logoutInstance, ManagerBreakers, ManagerHttpError, sendText, setWebhook, waitUntilClosed } from '@gw/evolution';
import { startSimulator, type Harness } from '../../services/instance-simulator/src/testing/sim-harness.ts';

let sim: Harness;

beforeAll(async () => {
  sim = await startSimulator({ logger: false });
});

afterAll(async () => {
  await sim?.close();
});

describe('Evolution API v2 adapter against the simulator over HTTP', () => {
  it('runs an instance through its lifecycle: create, connect (QR), paired, send, logout, delete', async () => {
    const created = await createInstance(sim.baseUrl, sim.globalKey, 'adapter-a', 5000, { qrcode: false });
    expect(created.token).toEqual(expect.any(String));
    const token = created.token!;
    expect(await connectionState(sim.baseUrl, token, 'adapter-a')).toBe('close');

    const qr = await connectInstance(sim.baseUrl, token, 'adapter-a', '+14155550123');
    expect(qr.qr_base64).toMatch(/^data:image\/png;base64,/);
    expect(qr.qr_code).toEqual(expect.any(String));
    expect(qr.pairing_code).toEqual(expect.any(String));
    expect(await connectionState(sim.baseUrl, token, 'adapter-a')).toBe('connecting');

    expect((await sim.call('POST', '/sim/instances/adapter-a/pair')).status).toBe(200);
    expect(await connectionState(sim.baseUrl, token, 'adapter-a')).toBe('open');
    await setWebhook(sim.baseUrl, token, 'adapter-a', 'http://127.0.0.1:9/hooks', ['SEND_MESSAGE']);

    const sent = await sendText({ managerUrl: sim.baseUrl, apiKey: token, instance: 'adapter-a', phone: '+14155550100', text: 'hello', timeoutMs: 2000 });
    expect(sent).toMatchObject({ kind: 'accepted', providerStatus: 'PENDING' });
    const absent = await sendText({ managerUrl: sim.baseUrl, apiKey: token, instance: 'adapter-a', phone: '+19995550100', text: 'hello', timeoutMs: 2000 });
    expect(absent).toMatchObject({ kind: 'failed', reason: 'unknown_number' });

    expect(await connectionState(sim.baseUrl, token, 'adapter-a')).toBe('open');
    await logoutInstance(sim.baseUrl, token, 'adapter-a');
    await waitUntilClosed(sim.baseUrl, token, 'adapter-a', 2000);
    await deleteInstance(sim.baseUrl, sim.globalKey, 'adapter-a');
    await expect(connectionState(sim.baseUrl, sim.globalKey, 'adapter-a')).rejects.toThrow(/404/);
    // Gone: the status is there for a caller to tell "already deleted" from a refusal.
    const again = await deleteInstance(sim.baseUrl, sim.globalKey, 'adapter-a').catch((error: unknown) => error);
    expect(again).toBeInstanceOf(ManagerHttpError);
    expect(again).toMatchObject({ status: 404, message: 'instance manager answered HTTP 404 to delete' });
  });

  it('deletes a connected instance, as Evolution 2.3+ does (it logs it out first)', async () => {
    const token = (await createInstance(sim.baseUrl, sim.globalKey, 'adapter-c', 5000, { qrcode: false })).token!;
    await sim.call('POST', '/sim/instances/adapter-c/pair');
    await deleteInstance(sim.baseUrl, token, 'adapter-c');
    await expect(connectionState(sim.baseUrl, sim.globalKey, 'adapter-c')).rejects.toMatchObject({ status: 404 });
  });

  it('classifies a timeout as ambiguous (the manager may have sent it) and an unreachable manager as not sent', async () => {
    await createInstance(sim.baseUrl, sim.globalKey, 'adapter-b');
    await sim.call('POST', '/sim/instances/adapter-b/pair');
    await sim.call('PUT', '/sim/faults', { body: { instance: 'adapter-b', mode: 'timeout', delay_ms: 1500, count: 1 } });
    const slow = await sendText({ managerUrl: sim.baseUrl, apiKey: sim.globalKey, instance: 'adapter-b', phone: '+14155550100', text: 'slow', timeoutMs: 300 });
    expect(slow.kind).toBe('ambiguous');
    const down = await sendText({ managerUrl: 'http://127.0.0.1:9', apiKey: 'k', instance: 'x', phone: '+14155550100', text: 'x', timeoutMs: 300 });
    expect(down).toMatchObject({ kind: 'failed', reason: 'manager_unavailable' });
  });

  it('a breaker per manager fails fast once the manager keeps failing', async () => {
    const breakers = new ManagerBreakers({ resetTimeoutMs: 60_000, volumeThreshold: 3 });
    const request = { managerUrl: 'http://127.0.0.1:9', apiKey: 'k', instance: 'x', phone: '+14155550100', text: 'x', timeoutMs: 300 };
    const results = [];
    for (let i = 0; i < 6; i++) results.push(await breakers.send(request));
    expect(results.slice(0, 3).every((r) => r.kind === 'failed' && r.reason === 'manager_unavailable')).toBe(true);
    expect(results.at(-1)).toMatchObject({ kind: 'failed', reason: 'circuit_open' });
    expect(breakers.isOpen('http://127.0.0.1:9')).toBe(true);
    breakers.shutdown();
  });
});
