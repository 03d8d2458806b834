import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Harness } from './testing/sim-harness.ts';

let sim: Harness;
let inline: Harness;

beforeAll(async () => {
  sim = await startSimulator();
  inline = await startSimulator({ pageKeyInline: true, globalApiKey: 'inline-key-123' });
});
afterAll(async () => {
  await sim.close();
  await inline.close();
});

describe('GET /sim/instances/{instance}/phone', () => {
  it('serves an HTML page with the instance name, without auth and without the key by default', async () => {
    await sim.call('POST', '/instance/create', { body: { instanceName: 'phone-<demo>' } });

    const response = await fetch(`${sim.baseUrl}/sim/instances/${encodeURIComponent('phone-<demo>')}/phone`);
    const html = await response.text();

    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    expect(response.headers.get('content-security-policy')).toContain("connect-src 'self'");
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(html).toContain('phone-&#60;demo&#62;');
    expect(html).not.toContain('<demo>');
    expect(html).not.toContain(sim.globalKey);
    expect(html).toContain('const inlineKey = null;');
  });

  it('embeds the global key for a loopback visitor when pageKeyInline is on', async () => {
    await inline.call('POST', '/instance/create', { body: { instanceName: 'phone-inline' } });

    const html = await (await fetch(`${inline.baseUrl}/sim/instances/phone-inline/phone`)).text();

    expect(html).toContain('phone-inline');
    expect(html).toContain('const inlineKey = "inline-key-123";');
  });

  it('answers 404 for an unknown instance', async () => {
    const response = await fetch(`${sim.baseUrl}/sim/instances/nope/phone`);
    expect(response.status).toBe(404);
  });
});
