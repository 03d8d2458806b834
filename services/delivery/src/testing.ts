// For the delivery service's int tests: a real runtime (Kafka, registry, Postgres of an isolated
// test database), a real simulator, and a customer with a paired instance on it.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll } from 'vitest';
import { sql } from '@gw/db';
import { ManagerBreakers } from '@gw/evolution';
import { InstanceLanes } from './dispatch/send-lanes.ts';
import { newEventId, type SendDecided } from '@gw/events';
import { createRuntime, type Runtime, type StageEvents } from '@gw/runtime';
import { SEAL_USES, SecretBox } from '@gw/security';
// The Evolution simulator is another service: tests reach its harness by path, as test/support does.
import { createOpenInstance, startSimulator, type Harness } from '../../instance-simulator/src/testing/sim-harness.ts';
import { isolate, type Isolation } from '../../../test/support/infra.ts';

export interface DeliveryFixture {
  isolation: Isolation;
  runtime: Runtime;
  simulator: Harness;
  customerId: string;
  instanceId: string;
  managerInstance: string;
  /** Texts the simulator accepted, and how often each. */
  ledger(): Promise<Map<string, number>>;
  close(): Promise<void>;
}

/** No pacing unless a test asks for it (pacing.int.test.ts runs the defaults): the claim and resolver tests time attempts to the send timeout. */
const UNPACED = { DELIVERY_TYPING_MAX_MS: '0', DELIVERY_SEND_GAP_MS: '0' };

export async function deliveryFixture(env: Record<string, string> = {}): Promise<DeliveryFixture> {
  const isolation = await isolate();
  const simulator = await startSimulator({ logger: false });
  const runtime = await createRuntime('delivery-test', { env: { ...process.env, ...isolation.env, DELIVERY_SEND_TIMEOUT_MS: '1500', ...UNPACED, ...env }, defaultMetrics: false });
  const customerId = `cus_${randomUUID().slice(0, 8)}`;
  const instanceId = `ins_${randomUUID().slice(0, 8)}`;
  const managerInstance = `front-${randomUUID().slice(0, 6)}`;
  const token = await createOpenInstance(simulator, managerInstance);
  const sealed = new SecretBox(isolation.env.GATEWAY_SECRET_KEY!).seal(token, SEAL_USES.managerApiKey(instanceId));
  await runtime.pool.query(sql.typeAlias('void')`INSERT INTO customers (id, name) VALUES (${customerId}, 'Delivery test')`);
  await runtime.pool.query(sql.typeAlias('void')`
    INSERT INTO instances (id, customer_id, name, manager_url, manager_instance, manager_api_key_enc)
    VALUES (${instanceId}, ${customerId}, 'front', ${simulator.baseUrl}, ${managerInstance}, ${sealed})`);
  return {
    isolation,
    runtime,
    simulator,
    customerId,
    instanceId,
    managerInstance,
    async ledger() {
      const messages: Array<{ text: string }> = (await simulator.call('GET', `/sim/ledger?instance=${managerInstance}`)).body.messages;
      const counts = new Map<string, number>();
      for (const m of messages) counts.set(m.text, (counts.get(m.text) ?? 0) + 1);
      return counts;
    },
    async close() {
      await runtime.close();
      await simulator.close();
      await isolation.cleanup();
    },
  };
}

let offset = 0;

/** An accepted decision of the fixture's customer, as the policy stage appends it. */
export function acceptedDecision(fixture: DeliveryFixture, n: number, text = `Your code is ${100_000 + n}`): SendDecided {
  const commandId = `cmd_${randomUUID()}`;
  const phone = `+1415555${String(3000 + n).padStart(4, '0')}`;
  return {
    event_id: newEventId(),
    correlation_id: commandId,
    occurred_at: Date.now(),
    customer_id: fixture.customerId,
    instance_id: fixture.instanceId,
    message_id: `msg_${commandId.slice(4)}`,
    log_id: n,
    decision: 'accepted',
    error_code: null,
    error_message: null,
    reasons: [],
    policy_version: 'test',
    recipient: phone,
    message_purpose: 'authentication',
    message_digest: 'digest',
    dispatch: { instance_name: fixture.managerInstance, phone, text },
    partition_chain: 0,
    prev_hash: '',
    entry_hash: '',
  };
}

/** Decisions as the delivery stage receives them from runStage: with their offsets. */
export function asEvents(decisions: SendDecided[]): StageEvents<'SendDecided'> {
  return decisions.map((payload) => ({ offset: BigInt(offset++), event: { type: 'SendDecided', payload } }));
}

/**
 * A fixture, breakers and instance lanes (one process's) for a test file, set up before its tests
 * and torn down after them. `env`: settings of the fixture's runtime.
 */
export function useDeliveryFixture(env: Record<string, string> = {}): { readonly fixture: DeliveryFixture; readonly breakers: ManagerBreakers; readonly lanes: InstanceLanes } {
  let fixture: DeliveryFixture | undefined;
  let breakers: ManagerBreakers | undefined;
  let lanes: InstanceLanes | undefined;
  beforeAll(async () => {
    fixture = await deliveryFixture(env);
    breakers = new ManagerBreakers({ resetTimeoutMs: 60_000 });
    const settings = fixture.runtime.config.delivery.pacing;
    lanes = new InstanceLanes(() => settings);
  }, 120_000);
  afterAll(async () => {
    breakers?.shutdown();
    await fixture?.close();
  });
  return {
    get fixture() {
      if (!fixture) throw new Error('the delivery fixture is not set up yet');
      return fixture;
    },
    get breakers() {
      return breakers!;
    },
    get lanes() {
      return lanes!;
    },
  };
}
