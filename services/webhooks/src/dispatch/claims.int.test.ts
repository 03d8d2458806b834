import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPool, sql, z, type Pool } from '@gw/db';
import { customerRow, instanceOf, testBox } from '../../../../libs/accounts/src/testing.ts';
import { isolate, type Isolation } from '../../../../test/support/infra.ts';
import { claimDue, type ClaimInput } from './claims.ts';

// Claims over a real database: each endpoint is claimed up to its lane's room, so a dead endpoint
// (a failure streak) holds a short lane, and nothing this process already holds is claimed twice over.
let isolation: Isolation;
let pool: Pool;
const box = testBox();
let customer: string;

beforeAll(async () => {
  isolation = await isolate();
  pool = await createPool(isolation.databaseUrl, { maxConnections: 2 });
  customer = await customerRow(pool, 'Claims Clinic');
}, 120_000);

afterAll(async () => {
  await pool?.end();
  await isolation?.cleanup();
});

/** An active endpoint with `due` pending deliveries, due now; `failures`: its failure streak. */
async function endpointWithBacklog(name: string, due: number, failures: number): Promise<string> {
  const { instance_id: instanceId } = await instanceOf(pool, box, customer, name);
  await pool.query(sql.typeAlias('void')`
    INSERT INTO webhook_endpoints (instance_id, customer_id, destination_url, events, status, signing_secret_enc, consecutive_failures, failing_since)
    VALUES (${instanceId}, ${customer}, 'https://93.184.216.34/hooks', ${sql.array(['message.sent'], 'text')}, 'active', 'sealed', ${failures}, ${failures > 0 ? new Date().toISOString() : null})`);
  const rows = Array.from({ length: due }, (_, i) => [`whd_${name}_${i}`, `evt_${name}_${i}`, instanceId]);
  await pool.query(sql.typeAlias('void')`
    INSERT INTO webhook_deliveries (delivery_id, event_id, instance_id, customer_id, event, body, occurred_at, state, next_attempt_at)
    SELECT d, e, i, ${customer}, 'message.sent', '{}', now(), 'pending', now() - interval '1 second'
      FROM ${sql.unnest(rows, ['text', 'text', 'text'])} AS t(d, e, i)`);
  return instanceId;
}

const input = (held: Map<string, number>): ClaimInput => ({ now: Date.now(), limit: 500, laneCap: { healthy: 8, failing: 2 }, held, leaseMs: 60_000 });
const countBy = (claims: Array<{ instanceId: string }>) => claims.reduce((m, c) => m.set(c.instanceId, (m.get(c.instanceId) ?? 0) + 1), new Map<string, number>());

describe('claimDue', () => {
  it('claims each endpoint up to its lane room: the cap less what this process holds, a short cap for a failing endpoint', async () => {
    const healthy = await endpointWithBacklog('healthy', 30, 0);
    const dead = await endpointWithBacklog('dead', 30, 5);

    const first = countBy(await claimDue(pool, input(new Map())));
    expect(first.get(healthy)).toBe(8);
    expect(first.get(dead)).toBe(2);

    // This process still holds 5 of the healthy lane's claims and both of the dead lane's.
    const second = countBy(await claimDue(pool, input(new Map([[healthy, 5], [dead, 2]]))));
    expect(second.get(healthy)).toBe(3);
    expect(second.has(dead)).toBe(false);

    const inFlight = await pool.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM webhook_deliveries WHERE state = 'in_flight'`);
    expect(inFlight).toBe(8 + 2 + 3);
  });
});
