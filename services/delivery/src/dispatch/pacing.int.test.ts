import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { sql } from '@gw/db';
import type { OutgoingRecord } from '@gw/kafka';
import { SEAL_USES, SecretBox } from '@gw/security';
import { createOpenInstance } from '../../../instance-simulator/src/testing/sim-harness.ts';
import { acceptedDecision, asEvents, useDeliveryFixture } from '../testing.ts';
import { dispatchAccepted } from './handler.ts';
import { InstanceDirectory } from './instance-directory.ts';
import { sendGapMs, typingDelayMs } from './pacing.ts';

// Human pacing through the delivery stage's handler and lanes, against real Postgres, Kafka and
// the simulator (which types for sendText's `delay` as Evolution does), with the real default
// pacing (0.3 s a character, 0.8 to 12 s, a 1 to 1.5 s gap). The fixture's send timeout, 1.5 s,
// is shorter than the typing delay here: the call's timeout must wait the delay out.
const suite = useDeliveryFixture({ DELIVERY_TYPING_MAX_MS: '12000', DELIVERY_SEND_GAP_MS: '1000' });
const batch = { topic: 'policy-decisions', partition: 0, heartbeat: async () => undefined, nextOffset: 0n };

type LedgerEntry = { text: string; received_at: string; typing_ms?: number };

async function ledgerOf(manager: string): Promise<Map<string, LedgerEntry>> {
  const messages: LedgerEntry[] = (await suite.fixture.simulator.call('GET', `/sim/ledger?instance=${manager}`)).body.messages;
  return new Map(messages.map((m) => [m.text, m]));
}

/** A second instance of the fixture's customer (so on the same partition), on the same manager. */
async function secondInstance(): Promise<{ instanceId: string; manager: string }> {
  const { runtime, simulator, isolation, customerId } = suite.fixture;
  const manager = `other-${randomUUID().slice(0, 6)}`;
  const instanceId = `ins_${randomUUID().slice(0, 8)}`;
  const token = await createOpenInstance(simulator, manager);
  const sealed = new SecretBox(isolation.env.GATEWAY_SECRET_KEY!).seal(token, SEAL_USES.managerApiKey(instanceId));
  await runtime.pool.query(sql.typeAlias('void')`
    INSERT INTO instances (id, customer_id, name, manager_url, manager_instance, manager_api_key_enc)
    VALUES (${instanceId}, ${customerId}, 'other', ${simulator.baseUrl}, ${manager}, ${sealed})`);
  return { instanceId, manager };
}

const at = (entry: LedgerEntry | undefined) => Date.parse(entry!.received_at);

async function outcomesIn(outputs: OutgoingRecord[]) {
  const types = [];
  for (const r of outputs) {
    const event = await suite.fixture.runtime.codec.decode({ topic: r.topic, partition: 0, offset: '0', key: r.key, value: r.value, headers: r.headers ?? {}, timestamp: '0' });
    if (event?.type === 'MessageDispatched' || event?.type === 'DeliveryFailed') types.push([event.type, event.payload.message_id]);
  }
  return types;
}

describe('human pacing at delivery', () => {
  it('types before a send for a time scaled to its text, keeps the gap between sends of an instance, and holds up no other instance', async () => {
    const { fixture } = suite;
    const other = await secondInstance();
    const typed = { ...acceptedDecision(fixture, 1, 'See you!'), message_purpose: 'reminder' };
    const code = acceptedDecision(fixture, 2, 'Your code is 424242');
    const elsewhere = { ...acceptedDecision(fixture, 3, 'Your code is 737373'), instance_id: other.instanceId };
    elsewhere.dispatch = { ...elsewhere.dispatch!, instance_name: other.manager };
    const pacing = fixture.runtime.config.delivery.pacing;
    const typingMs = typingDelayMs('See you!', typed.message_id, 'reminder', pacing);
    expect(typingMs).toBeGreaterThan(fixture.runtime.config.delivery.sendTimeoutMs);

    const directory = new InstanceDirectory(fixture.runtime.pool, new SecretBox(fixture.isolation.env.GATEWAY_SECRET_KEY!));
    const started = Date.now();
    // One batch: two sends of the first instance, one of the second, all of one customer (one partition).
    const outputs = await dispatchAccepted({ runtime: fixture.runtime, directory, breakers: suite.breakers, lanes: suite.lanes })(asEvents([typed, code, elsewhere]), batch);

    const first = await ledgerOf(fixture.managerInstance);
    // The typing delay went to the manager as sendText `delay`, derived from the text and message id; the code was not typed.
    expect(first.get('See you!')).toMatchObject({ typing_ms: typingMs });
    expect(first.get('Your code is 424242')!.typing_ms).toBeUndefined();
    expect(at(first.get('See you!')) - started).toBeGreaterThanOrEqual(typingMs);
    // The instance's next send started at least its gap after the typed one ended.
    expect(at(first.get('Your code is 424242')) - at(first.get('See you!'))).toBeGreaterThanOrEqual(sendGapMs(typed.message_id, pacing));
    // The other instance's send went at once, while the first instance was still typing.
    const second = await ledgerOf(other.manager);
    expect(at(second.get('Your code is 737373')) - started).toBeLessThan(1_000);
    expect(at(second.get('Your code is 737373'))).toBeLessThan(at(first.get('See you!')));

    // Each sent once and dispatched, in the batch's order: the call's timeout waited the typing out (1.5 s would not have).
    expect(await outcomesIn(outputs)).toEqual([typed, code, elsewhere].map((d) => ['MessageDispatched', d.message_id]));
    expect([...first.values(), ...second.values()]).toHaveLength(3);
  });
});
