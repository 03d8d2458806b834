import { beforeAll, describe, expect, it } from 'vitest';
import { requestLimits } from '@gw/accounts';
import { sql, z } from '@gw/db';
import type { AnyEvent } from '@gw/events';
import { initialPolicyState, type LimitsOverridden } from '@gw/policy';
import { gatewayctl } from '../../../../test/support/cli.ts';
import { useIsolatedDatabase } from '../../../../test/support/isolated-database.ts';
import { readTopic } from '../../../../test/support/topic-reader.ts';

// `gatewayctl limits requests|grant|decline` as an operator runs them, against real Postgres and
// Kafka: requests are made as the dashboard makes them (@gw/accounts' requestLimits); a grant
// appends the existing override fact, LimitsOverridden, with the request's values, before the
// request is marked granted.
const db = useIsolatedDatabase({ maxConnections: 4 });
const A = 'cus_limits_a';
const B = 'cus_limits_b';
let env: Record<string, string>;
let requestA: string;
let requestB: string;

const Row = z.object({ status: z.string(), decided_by: z.string().nullable(), decision_note: z.string().nullable(), decided: z.boolean() });
const rowOf = (id: string) => db.pool.one(sql.type(Row)`SELECT status, decided_by, decision_note, decided_at IS NOT NULL AS decided FROM limit_requests WHERE id = ${id}`);

const run = async (...args: string[]) => {
  const result = await gatewayctl(env, ...args);
  return { ...result, json: result.stdout.trim() === '' ? null : (JSON.parse(result.stdout) as unknown) };
};

/** The LimitsOverridden facts of a customer on its stream, as the policy engine will fold them. */
const overrides = (events: AnyEvent[], customerId: string) =>
  events.flatMap((e) => (e.type === 'PolicyInputRecorded' && e.payload.customer_id === customerId && e.payload.input_type === 'LimitsOverridden' ? [JSON.parse(e.payload.payload) as LimitsOverridden] : []));

beforeAll(async () => {
  env = { ...db.isolation.env, GATEWAY_OPERATOR: 'ops-bob' };
  await db.pool.query(sql.typeAlias('void')`INSERT INTO customers (id, name) VALUES (${A}, 'Acme Clinics'), (${B}, 'Bay Pharmacy')`);
  // A has an override from an earlier review: a higher monthly limit and burst, which a grant of a daily limit keeps.
  const state = {
    ...initialPolicyState(A),
    plan: { planId: 'growth', validUntil: Date.now() + 20 * 86_400_000 },
    override: { at: Date.now() - 86_400_000, monthly: 8000, velocity: { burst: 50 }, grantedBy: 'ops-old', reason: 'earlier review' },
  };
  await db.pool.query(sql.typeAlias('void')`INSERT INTO policy_state (customer_id, state) VALUES (${A}, ${sql.json(JSON.parse(JSON.stringify(state)))})`);
  requestA = (await requestLimits(db.pool, { customerId: A, daily: 2000, monthly: null, reason: 'reminders for 3 new clinics', requestedBy: 'owner@acme.test' })).id;
  requestB = (await requestLimits(db.pool, { customerId: B, daily: null, monthly: 3000, reason: 'pickups', requestedBy: 'owner@bay.test' })).id;
}, 120_000);

describe('gatewayctl limits', () => {
  it('lists the requests, with each customer’s limits now', async () => {
    const listed = await run('limits', 'requests', '--status', 'pending', '--json');
    expect(listed.code, listed.stderr).toBe(0);
    const rows = listed.json as Array<Record<string, unknown>>;
    expect(rows.map((r) => r.request_id).sort()).toEqual([requestA, requestB].sort());
    expect(rows.find((r) => r.request_id === requestA)).toMatchObject({
      customer_id: A,
      status: 'pending',
      requested_daily: 2000,
      requested_monthly: null,
      current_daily: 500,
      current_monthly: 8000,
      plan: 'growth',
      reason: 'reminders for 3 new clinics',
      requested_by: 'owner@acme.test',
    });
    // No plan the engine knows: no current limits.
    expect(rows.find((r) => r.request_id === requestB)).toMatchObject({ current_daily: null, current_monthly: null, plan: null });

    const onlyB = await run('limits', 'requests', '--customer', B, '--json');
    expect((onlyB.json as Array<{ request_id: string }>).map((r) => r.request_id)).toEqual([requestB]);
    const human = await gatewayctl(env, 'limits', 'requests');
    expect(human.stdout).toMatch(new RegExp(`^request_id +${requestA}$`, 'm'));
    const bad = await run('limits', 'requests', '--status', 'maybe', '--json');
    expect(bad.code).toBe(1);
    expect(bad.json).toEqual({ error: 'Unknown status maybe: use pending, granted, declined.' });
  });

  it('leaves a request pending when its override cannot be appended (the fact goes first)', async () => {
    const failed = await gatewayctl({ ...env, SCHEMA_REGISTRY_URL: 'http://127.0.0.1:9/apis/ccompat/v7' }, 'limits', 'grant', requestA, '--reason', 'ok', '--json');
    expect(failed.code).toBe(1);
    expect(await rowOf(requestA)).toEqual({ status: 'pending', decided_by: null, decision_note: null, decided: false });
  });

  it("grants a request: appends LimitsOverridden with the request's values (keeping the rest of the override), then marks it granted", async () => {
    const granted = await run('limits', 'grant', requestA, '--reason', 'reviewed: appointment reminders', '--json');
    expect(granted.code, granted.stderr).toBe(0);
    expect(granted.json).toMatchObject({ request_id: requestA, customer_id: A, status: 'granted', daily: 2000, monthly: 8000, decided_by: 'ops-bob', appended: ['LimitsOverridden'] });
    expect(await rowOf(requestA)).toEqual({ status: 'granted', decided_by: 'ops-bob', decision_note: 'reviewed: appointment reminders', decided: true });

    const facts = overrides(await readTopic(env, 'customerEvents'), A);
    expect(facts).toHaveLength(1);
    expect(facts[0]).toMatchObject({ type: 'LimitsOverridden', customerId: A, daily: 2000, monthly: 8000, velocity: { burst: 50 }, grantedBy: 'ops-bob', reason: 'reviewed: appointment reminders' });
    const audit = (await readTopic(env, 'accountEvents')).find((e) => e.type === 'AccountChanged' && e.payload.action === 'limits.granted' && e.payload.subject_id === requestA);
    expect(audit?.type === 'AccountChanged' && audit.payload).toMatchObject({ customer_id: A, by: 'ops-bob', via: 'gatewayctl' });
  });

  it('refuses to decide a request twice, and an unknown one', async () => {
    const again = await run('limits', 'grant', requestA, '--reason', 'again', '--json');
    expect(again.code).toBe(1);
    expect((again.json as { error: string }).error).toMatch(new RegExp(`^Limit request ${requestA} was already granted by ops-bob at `));
    const unknown = await run('limits', 'decline', 'lrq_nothing', '--reason', 'no', '--json');
    expect(unknown.json).toEqual({ error: 'No limit request lrq_nothing.' });
    const badLimit = await run('limits', 'grant', requestB, '--daily', 'many', '--reason', 'x', '--json');
    expect(badLimit.json).toEqual({ error: '--daily many is not a whole number from 1 to 2000000000.' });
    expect(overrides(await readTopic(env, 'customerEvents'), A)).toHaveLength(1);
  });

  it('declines a request: marked declined with the reason, and no override appended', async () => {
    const declined = await run('limits', 'decline', requestB, '--reason', 'please tell us more about the pickups', '--json');
    expect(declined.code, declined.stderr).toBe(0);
    expect(declined.json).toMatchObject({ request_id: requestB, status: 'declined', decided_by: 'ops-bob', decision_note: 'please tell us more about the pickups' });
    expect(await rowOf(requestB)).toMatchObject({ status: 'declined', decided: true });
    expect(overrides(await readTopic(env, 'customerEvents'), B)).toEqual([]);
  });

  it('grants other values than the ones asked for when the operator says so', async () => {
    const id = (await requestLimits(db.pool, { customerId: B, daily: null, monthly: 3000, reason: 'pickups, with details', requestedBy: 'owner@bay.test' })).id;
    const granted = await run('limits', 'grant', id, '--daily', '150', '--monthly', '2500', '--reason', 'partly', '--json');
    expect(granted.code, granted.stderr).toBe(0);
    expect(overrides(await readTopic(env, 'customerEvents'), B)).toEqual([expect.objectContaining({ daily: 150, monthly: 2500, grantedBy: 'ops-bob', reason: 'partly' })]);
  });
});
