import { beforeAll, describe, expect, it } from 'vitest';
import { sql } from '@gw/db';
import { gatewayctl } from '../../../../test/support/cli.ts';
import { writeGuard } from '../../../../test/support/dashboard/instance-guard.ts';
import { useIsolatedDatabase } from '../../../../test/support/isolated-database.ts';
import { readTopic } from '../../../../test/support/topic-reader.ts';

// `gatewayctl instance restrictions|lift-restriction` as an operator runs them, against real
// Postgres and Kafka: the restricted instances come from the number guard's projection
// (instance_guard, written here as the policy consumer writes it); lifting one appends the
// RestrictionLifted fact to the customer's stream, as `instance resume` appends InstanceResumed.
const db = useIsolatedDatabase({ maxConnections: 2 });
const A = 'cus_guard_a';
const B = 'cus_guard_b';
const HOUR = 3_600_000;
const now = Date.now();
let env: Record<string, string>;

const run = async (...args: string[]) => {
  const result = await gatewayctl(env, ...args);
  return { ...result, json: result.stdout.trim() === '' ? null : (JSON.parse(result.stdout) as unknown) };
};

beforeAll(async () => {
  env = { ...db.isolation.env, GATEWAY_OPERATOR: 'ops-bob' };
  await db.pool.query(sql.typeAlias('void')`INSERT INTO customers (id, name) VALUES (${A}, 'Acme Clinics'), (${B}, 'Bay Pharmacy')`);
  for (const [id, customer, name] of [['ins_a1', A, 'front-desk'], ['ins_a2', A, 'lab'], ['ins_b1', B, 'pickups']] as const) {
    await db.pool.query(sql.typeAlias('void')`
      INSERT INTO instances (id, customer_id, name, manager_url, manager_instance, manager_api_key_enc) VALUES (${id}, ${customer}, ${name}, 'http://127.0.0.1:9', ${id}, 'unused')`);
  }
  await writeGuard(db.pool, { customerId: A, instanceId: 'ins_a1', ageDays: 1, firstConnectedAt: now - 30 * HOUR, allowance: 20, restrictedUntil: now + 2 * HOUR, signal: 'send_error', signals: 1 });
  // Its restriction is over: not listed.
  await writeGuard(db.pool, { customerId: A, instanceId: 'ins_a2', ageDays: 60, restrictedUntil: now - HOUR, signal: 'reachout_timelock', signals: 3 });
  await writeGuard(db.pool, { customerId: B, instanceId: 'ins_b1', ageDays: 9, restrictedUntil: now + HOUR, signal: 'banned', signals: 2 });
}, 120_000);

describe('gatewayctl instance restrictions', () => {
  it('lists the instances restricted now, soonest end first, with their signal and count', async () => {
    const listed = await run('instance', 'restrictions', '--json');
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.json).toEqual([
      { customer_id: B, instance_id: 'ins_b1', name: 'pickups', signal: 'banned', until: new Date(now + HOUR).toISOString(), signals: 2 },
      { customer_id: A, instance_id: 'ins_a1', name: 'front-desk', signal: 'send_error', until: new Date(now + 2 * HOUR).toISOString(), signals: 1 },
    ]);
    const onlyA = await run('instances', 'restrictions', '--customer', A, '--json');
    expect((onlyA.json as Array<{ instance_id: string }>).map((r) => r.instance_id)).toEqual(['ins_a1']);
  });

  it('lifts a restriction: appends RestrictionLifted with who and why to the customer’s stream', async () => {
    const lifted = await run('instances', 'lift-restriction', 'ins_a1', '--reason', 'reviewed: a one-off rejection', '--json');
    expect(lifted.code, lifted.stderr).toBe(0);
    expect(lifted.json).toMatchObject({ instance_id: 'ins_a1', customer_id: A, restricted: false, appended: ['RestrictionLifted'] });
    const facts = (await readTopic(env, 'customerEvents')).flatMap((e) =>
      e.type === 'PolicyInputRecorded' && e.payload.input_type === 'RestrictionLifted' ? [{ instance: e.payload.instance_id, fact: JSON.parse(e.payload.payload) as unknown }] : []);
    expect(facts).toEqual([{ instance: 'ins_a1', fact: { type: 'RestrictionLifted', customerId: A, at: expect.any(Number), instanceId: 'ins_a1', by: 'ops-bob', reason: 'reviewed: a one-off rejection' } }]);
  });

  it('refuses an unknown instance, a missing one and an empty reason, appending nothing', async () => {
    expect((await run('instance', 'lift-restriction', '--instance', 'ins_none', '--reason', 'x', '--json')).json).toEqual({ error: 'No instance ins_none.' });
    expect((await run('instance', 'lift-restriction', '--reason', 'x', '--json')).json).toEqual({ error: 'Say which instance: gatewayctl instance lift-restriction ins_… --reason …' });
    expect((await run('instance', 'lift-restriction', 'ins_b1', '--reason', ' ', '--json')).json).toEqual({ error: 'Lifting a restriction needs --reason (the outcome of the review).' });
  });
});
