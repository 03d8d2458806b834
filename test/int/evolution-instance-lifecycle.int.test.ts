import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectInstance, connectionState, createInstance, LICENSE_REQUIRED_WORDS, ManagerHttpError, onManagerLicenseRequired, restartPairing, sendText } from '@gw/evolution';
import { startSimulator, type Harness } from '../../services/instance-simulator/src/testing/sim-harness.ts';

// The instance lifecycle of libs/evolution against the simulator with the real Evolution
// timings (issue 24 rows 1, 10, 11): create with the real 5 s wait of qrcode:true, a create
// retried after a try that gave up, re-pairing with a number, and 2.4's licence gate.
let sim: Harness;

beforeAll(async () => {
  // The defaults: createQrDelayMs 5000 as instance.controller.ts, logout closing later.
  sim = await startSimulator({ logger: false });
});
afterAll(async () => {
  await sim?.close();
});

const namesOnManager = async () => ((await sim.call('GET', '/instance/fetchInstances')).body as Array<{ name: string }>).map((i) => i.name);

describe('instance lifecycle against a manager with Evolution timings', () => {
  it('creates an instance and starts pairing within the default timeout, though create with qrcode waits 5 s', async () => {
    const created = await createInstance(sim.baseUrl, sim.globalKey, 'life-create');

    expect(created.token).toEqual(expect.any(String));
    expect(created.pairing).toMatchObject({ qr_code: expect.stringMatching(/^2@/), qr_base64: expect.stringMatching(/^data:image\/png;base64,/), state: 'connecting' });
    expect(await connectionState(sim.baseUrl, created.token!, 'life-create')).toBe('connecting');
    expect((await namesOnManager()).filter((name) => name === 'life-create')).toHaveLength(1);
  }, 20_000);

  it('a retried create replaces what an earlier try left behind: exactly one instance, and its token works', async () => {
    // An earlier try as the old client made it: qrcode:true, given up after 200 ms while
    // Evolution waits its 5 s; the instance is there already, pairing.
    await fetch(`${sim.baseUrl}/instance/create`, {
      method: 'POST',
      headers: { apikey: sim.globalKey, 'content-type': 'application/json' },
      body: JSON.stringify({ instanceName: 'life-retry', qrcode: true, integration: 'WHATSAPP-BAILEYS' }),
      signal: AbortSignal.timeout(200),
    }).catch(() => undefined);
    expect(await namesOnManager()).toContain('life-retry');

    // Without leave to replace it, the name is refused as Evolution's instanceLoggedGuard does.
    await expect(createInstance(sim.baseUrl, sim.globalKey, 'life-retry', 5000, { qrcode: false })).rejects.toMatchObject({ status: 403, code: 'name_in_use' });
    const retried = await createInstance(sim.baseUrl, sim.globalKey, 'life-retry', 5000, { replaceLeftover: true });

    expect((await namesOnManager()).filter((name) => name === 'life-retry')).toHaveLength(1);
    expect(await connectionState(sim.baseUrl, retried.token!, 'life-retry')).toBe('connecting');
  }, 20_000);

  it('re-pairing with a number while a pairing is under way yields a pairing code', async () => {
    const { token } = await createInstance(sim.baseUrl, sim.globalKey, 'life-repair');
    // Connect alone ignores the number while connecting (Evolution issue #2197).
    expect((await connectInstance(sim.baseUrl, token!, 'life-repair', '+14155552671')).pairing_code).toBeNull();

    const pairing = await restartPairing(sim.baseUrl, token!, 'life-repair', '+14155552671', { closeWithinMs: 10_000 });
    expect(pairing.pairing_code).toMatch(/^[A-Z0-9]{8}$/);
    expect(await connectionState(sim.baseUrl, token!, 'life-repair')).toBe('connecting');
  }, 20_000);

  it('classifies the licence gate: ManagerHttpError license_required, sendText manager_license_required, and counts it by operation', async () => {
    const { token } = await createInstance(sim.baseUrl, sim.globalKey, 'life-licence', 5000, { qrcode: false });
    await sim.call('POST', '/sim/instances/life-licence/pair');
    const counted: string[] = [];
    const stop = onManagerLicenseRequired((operation) => counted.push(operation));
    await sim.call('PUT', '/sim/license', { body: { required: true } });
    try {
      const state = await connectionState(sim.baseUrl, token!, 'life-licence').catch((error: unknown) => error);
      expect(state).toBeInstanceOf(ManagerHttpError);
      expect(state).toMatchObject({ status: 503, code: 'license_required' });
      expect((state as Error).message).toContain('/manager page');
      await expect(createInstance(sim.baseUrl, sim.globalKey, 'life-licence-2')).rejects.toMatchObject({ code: 'license_required' });

      const sent = await sendText({ managerUrl: sim.baseUrl, apiKey: token!, instance: 'life-licence', phone: '+14155550100', text: 'hi', timeoutMs: 2000 });
      expect(sent).toEqual({ kind: 'failed', reason: 'manager_license_required', detail: LICENSE_REQUIRED_WORDS });
      expect(counted).toEqual(['/instance/connectionState/{instance}', '/instance/create', '/message/sendText/{instance}']);
    } finally {
      stop();
      await sim.call('PUT', '/sim/license', { body: { required: false } });
    }
    // No stray instance from the refused create.
    expect(await namesOnManager()).not.toContain('life-licence-2');
  });
});
