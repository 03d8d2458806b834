import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Harness } from './testing/sim-harness.ts';

let sim: Harness;
beforeAll(async () => {
  sim = await startSimulator({ logger: false });
});
afterAll(() => sim.close());

describe('webhook inbox (a stand-in customer receiver)', () => {
  it('keeps each request\'s exact body and gateway headers, newest first, per inbox name', async () => {
    const raw = '{"event":"message.sent", "spacing":"kept as sent"}';
    for (const [name, body] of [['demo', raw], ['demo', '{"n":2}'], ['other', '{}']] as const) {
      const res = await fetch(`${sim.baseUrl}/sim/inbox/${name}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-chat-gateway-event': 'message.sent', 'x-chat-gateway-signature': 'sha256=ab', authorization: 'not kept' },
        body,
      });
      expect(res.status).toBe(200);
    }
    const listed = (await sim.call('GET', '/sim/inbox/demo', { apikey: null })).body as Array<{ raw_body: string; headers: Record<string, string> }>;
    expect(listed.map((e) => e.raw_body)).toEqual(['{"n":2}', raw]);
    expect(listed[1]!.headers).toMatchObject({ 'content-type': 'application/json', 'x-chat-gateway-event': 'message.sent', 'x-chat-gateway-signature': 'sha256=ab' });
    expect(listed[1]!.headers).not.toHaveProperty('authorization');
    expect((await sim.call('GET', '/sim/inbox/nobody', { apikey: null })).body).toEqual([]);
  });
});
