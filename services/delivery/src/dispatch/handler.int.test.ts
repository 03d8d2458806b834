import { describe, expect, it } from 'vitest';
import type { OutgoingRecord } from '@gw/kafka';
import { SecretBox } from '@gw/security';
import { acceptedDecision, asEvents, useDeliveryFixture } from '../testing.ts';
import { dispatchAccepted } from './handler.ts';
import { InstanceDirectory } from './instance-directory.ts';
import { InstanceLanes } from './send-lanes.ts';

// The delivery stage's batch handler against real Postgres, the real registry and the simulator,
// fed records as Kafka hands them over: copies of one decision, in one batch or across batches
// (a policy stage that re-emitted its last batch after a crash), must reach the manager once.
const suite = useDeliveryFixture();
const batch = { topic: 'policy-decisions', partition: 0, heartbeat: async () => undefined, nextOffset: 0n };

const handler = () => {
  const directory = new InstanceDirectory(suite.fixture.runtime.pool, new SecretBox(suite.fixture.isolation.env.GATEWAY_SECRET_KEY!));
  // Its own lanes: a second handler stands for a second process.
  const lanes = new InstanceLanes(() => suite.fixture.runtime.config.delivery.pacing);
  return dispatchAccepted({ runtime: suite.fixture.runtime, directory, breakers: suite.breakers, lanes });
};

async function outcomesIn(outputs: OutgoingRecord[]) {
  const events = [];
  for (const r of outputs) {
    const event = await suite.fixture.runtime.codec.decode({ topic: r.topic, partition: 0, offset: '0', key: r.key, value: r.value, headers: r.headers ?? {}, timestamp: '0' });
    if (event?.type === 'MessageDispatched' || event?.type === 'DeliveryFailed') events.push(event);
  }
  return events;
}

describe('delivery batch handler', () => {
  it('sends copies of one decision in one batch once, and re-emits that outcome for copies in later batches without sending', async () => {
    const run = handler();
    const first = acceptedDecision(suite.fixture, 1, 'batch copy one');
    const second = acceptedDecision(suite.fixture, 2, 'batch copy two');
    const out = await outcomesIn(await run(asEvents([first, first, second, first]), batch));
    expect(out.map((o) => [o.type, o.payload.message_id])).toEqual([
      ['MessageDispatched', first.message_id],
      ['MessageDispatched', second.message_id],
    ]);
    expect((await suite.fixture.ledger()).get('batch copy one')).toBe(1);
    // The outcomes carry what their consumers need (the customer's webhooks), so none reads the policy log.
    expect(out[0]!.payload).toMatchObject({ recipient: first.recipient, message_purpose: 'authentication', instance_name: 'front' });

    // The same decisions again, from a second handler (a restarted process): recorded outcomes, same event ids, nothing sent.
    const again = await outcomesIn(await handler()(asEvents([second, first]), batch));
    expect(again.map((o) => o.payload.event_id)).toEqual([out[1]!.payload.event_id, out[0]!.payload.event_id]);
    const ledger = await suite.fixture.ledger();
    expect([ledger.get('batch copy one'), ledger.get('batch copy two')]).toEqual([1, 1]);
  });

  it('two processes handed the same decision at once send it once', async () => {
    const decision = acceptedDecision(suite.fixture, 3, 'two processes at once');
    const [a, b] = await Promise.all([handler()(asEvents([decision]), batch), handler()(asEvents([decision]), batch)]);
    // The loser of the claim emits nothing while the send is open, or, when the winner has already
    // recorded its outcome, re-emits that very event (as for any redelivered decision): never a second outcome.
    const outcomes = await outcomesIn([...a, ...b]);
    expect(new Set(outcomes.map((o) => o.payload.event_id)).size).toBeLessThanOrEqual(1);
    expect(new Set(outcomes.map((o) => o.type)).size).toBeLessThanOrEqual(1);
    expect((await suite.fixture.ledger()).get('two processes at once')).toBe(1);
  });
});
