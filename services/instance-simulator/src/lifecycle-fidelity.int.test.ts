import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startSimulator, type Harness } from './testing/sim-harness.ts';

// The lifecycle as the real Evolution does it (see README "Fidelity notes"): the 5 s wait of a
// create with qrcode, the logout that finishes after its answer, connect ignoring `number`
// unless closed, the open instance deleted after a logout, and 2.4's licence gate.

let sim: Harness;
let quick: Harness;
const QUICK_DELAY_MS = 2_000;

beforeAll(async () => {
  sim = await startSimulator();
  // Delays short enough to keep the file quick, long enough that a loaded machine (int files run
  // two at a time on two cores) still sees the state before they end.
  quick = await startSimulator({ createQrDelayMs: QUICK_DELAY_MS, logoutCloseDelayMs: QUICK_DELAY_MS });
});
afterAll(async () => {
  await sim.close();
  await quick.close();
});

const state = async (harness: Harness, name: string) =>
  (await harness.call('GET', `/instance/connectionState/${name}`)).body.instance.state as string;

describe('instance lifecycle fidelity', () => {
  it('create with qrcode answers only after the configured delay, the instance already pairing', async () => {
    let answered = false;
    const pending = quick.call('POST', '/instance/create', { body: { instanceName: 'fid-1', qrcode: true } }).finally(() => (answered = true));
    await vi.waitFor(async () => expect(await state(quick, 'fid-1')).toBe('connecting'), { timeout: QUICK_DELAY_MS, interval: 20 });
    // Seen pairing while the create had not answered yet.
    expect(answered).toBe(false);
    const created = await pending;

    expect(created.status).toBe(201);
    expect(created.elapsedMs).toBeGreaterThanOrEqual(QUICK_DELAY_MS - 10);
    expect(created.body.qrcode).toMatchObject({ code: expect.stringMatching(/^2@/), count: 1 });
    const plain = await quick.call('POST', '/instance/create', { body: { instanceName: 'fid-1b' } });
    expect(plain.elapsedMs).toBeLessThan(QUICK_DELAY_MS - 10);
  });

  it('waits the real 5 s by default', async () => {
    const created = await sim.call('POST', '/instance/create', { body: { instanceName: 'fid-real', qrcode: true } });
    expect(created.status).toBe(201);
    expect(created.elapsedMs).toBeGreaterThanOrEqual(4990);
  }, 15_000);

  it('logout answers at once and the state turns close later', async () => {
    await quick.call('POST', '/instance/create', { body: { instanceName: 'fid-2' } });
    await quick.call('GET', '/instance/connect/fid-2');
    const logout = await quick.call('DELETE', '/instance/logout/fid-2');

    expect(logout.status).toBe(200);
    expect(await state(quick, 'fid-2')).toBe('connecting');
    await vi.waitFor(async () => expect(await state(quick, 'fid-2')).toBe('close'), { timeout: QUICK_DELAY_MS + 3_000, interval: 50 });
  });

  it('connect ignores the number while connecting and gives a pairing code only from close', async () => {
    await quick.call('POST', '/instance/create', { body: { instanceName: 'fid-3' } });
    const qr = await quick.call('GET', '/instance/connect/fid-3');
    const withNumber = await quick.call('GET', '/instance/connect/fid-3?number=5511912345678');

    expect(qr.body.pairingCode).toBeNull();
    expect(withNumber.body).toEqual(qr.body);

    await quick.call('DELETE', '/instance/logout/fid-3');
    await vi.waitFor(async () => expect(await state(quick, 'fid-3')).toBe('close'), { timeout: QUICK_DELAY_MS + 3_000, interval: 50 });
    const paired = await quick.call('GET', '/instance/connect/fid-3?number=5511912345678');
    expect(paired.body.pairingCode).toMatch(/^[A-Z0-9]{8}$/);
  });

  it('deletes an open instance (logged out first), as 2.3 does', async () => {
    await quick.call('POST', '/instance/create', { body: { instanceName: 'fid-4' } });
    await quick.call('POST', '/sim/instances/fid-4/pair');
    const deleted = await quick.call('DELETE', '/instance/delete/fid-4');

    expect(deleted.status).toBe(200);
    expect((await quick.call('GET', '/instance/connectionState/fid-4')).status).toBe(404);
  });

  it('licence mode answers 503 LICENSE_REQUIRED on business routes until switched off', async () => {
    await quick.call('POST', '/instance/create', { body: { instanceName: 'fid-5' } });
    expect((await quick.call('PUT', '/sim/license', { body: { required: true } })).body).toEqual({ required: true });
    try {
      const send = await quick.call('POST', '/message/sendText/fid-5', { body: { number: '5511912345678', text: 'hi' } });
      const create = await quick.call('POST', '/instance/create', { body: { instanceName: 'fid-6' }, apikey: 'wrong' });
      const root = await quick.call('GET', '/', { apikey: null });

      expect(send.status).toBe(503);
      expect(send.body).toEqual({
        error: 'service not activated',
        code: 'LICENSE_REQUIRED',
        register_url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/manager\/login$/),
        instance_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        docs_url: 'https://docs.evolutionfoundation.com.br/licensing',
        message: expect.stringContaining('This Evolution API instance is not activated. Open http://127.0.0.1:'),
      });
      // Before the apikey guard, as the middleware runs before the router.
      expect(create.status).toBe(503);
      expect(root.status).toBe(200);
      expect((await quick.call('PUT', '/sim/license', { body: { required: 'yes' } })).status).toBe(400);
    } finally {
      await quick.call('PUT', '/sim/license', { body: { required: false } });
    }
    expect((await quick.call('GET', '/instance/connectionState/fid-5')).status).toBe(200);
  });
});
