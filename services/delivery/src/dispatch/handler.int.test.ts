import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManagerBreakers } from '@gw/evolution';
import type { OutgoingRecord } from '@gw/kafka';
import { SecretBox } from '@gw/security';
import { acceptedDecision, asRecords, deliveryFixture, type DeliveryFixture } from '../testing.ts';
import { dispatchAccepted } from './handler.ts';
import { InstanceDirectory } from './instance-directory.ts';

// The delivery stage's batch handler against real Postgres, the real registry and the simulator,
// fed records as Kafka hands them over: copies of one decision, in one batch or across batches
// (a policy stage that re-emitted its last batch after a crash), must reach the manager once.
let fixture: DeliveryFixture;
let breakers: ManagerBreakers;
const meta = { topic: 'policy-decisions', partition: 0, heartbeat: async () => undefined };

beforeAll(async () => {
  fixture = await deliveryFixture();
  breakers = new ManagerBreakers({ resetTimeoutMs: 60_000 });
}, 120_000);

afterAll(async () => {
  breakers?.shutdown();
  await fixture?.close();
});

const handler = () => {
  const directory = new InstanceDirectory(fixture.runtime.pool, new SecretBox(fixture.isolation.env.GATEWAY_SECRET_KEY!));
  return dispatchAccepted({ runtime: fixture.runtime, directory, breakers });
};

async function outcomesIn(outputs: OutgoingRecord[]) {
  const events = [];
  for (const r of outputs) {
    const event = await fixture.runtime.codec.decode({ topic: r.topic, partition: 0, offset: '0', key: r.key, value: r.value, headers: r.headers ?? {}, timestamp: '0' });
    if (event?.type === 'MessageDispatched' || event?.type === 'DeliveryFailed') events.push(event);
  }
  return events;
}

describe('delivery batch handler', () => {
  it('sends copies of one decision in one batch once, and re-emits that outcome for copies in later batches without sending', async () => {
    const run = handler();
    const first = acceptedDecision(fixture, 1, 'batch copy one');
    const second = acceptedDecision(fixture, 2, 'batch copy two');
    const out = await outcomesIn(await run(await asRecords(fixture, [first, first, second, first]), meta));
    expect(out.map((o) => [o.type, o.payload.message_id])).toEqual([
      ['MessageDispatched', first.message_id],
      ['MessageDispatched', second.message_id],
    ]);
    expect((await fixture.ledger()).get('batch copy one')).toBe(1);

    // The same decisions again, from a second handler (a restarted process): recorded outcomes, same event ids, nothing sent.
    const again = await outcomesIn(await handler()(await asRecords(fixture, [second, first]), meta));
    expect(again.map((o) => o.payload.event_id)).toEqual([out[1]!.payload.event_id, out[0]!.payload.event_id]);
    const ledger = await fixture.ledger();
    expect([ledger.get('batch copy one'), ledger.get('batch copy two')]).toEqual([1, 1]);
  });

  it('two processes handed the same decision at once send it once', async () => {
    const decision = acceptedDecision(fixture, 3, 'two processes at once');
    const [a, b] = await Promise.all([handler()(await asRecords(fixture, [decision]), meta), handler()(await asRecords(fixture, [decision]), meta)]);
    expect((await outcomesIn([...a, ...b])).length).toBeLessThanOrEqual(1);
    expect((await fixture.ledger()).get('two processes at once')).toBe(1);
  });
});
