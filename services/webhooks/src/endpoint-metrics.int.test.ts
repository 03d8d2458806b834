import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPool, sql, type Pool } from '@gw/db';
import { createLogger } from '@gw/observability';
import { customerRow, instanceOf, testBox } from '../../../libs/accounts/src/testing.ts';
import { isolate, type Isolation } from '../../../test/support/infra.ts';
import { endpointHealthMetrics } from './endpoint-metrics.ts';

// The endpoint-health gauges over a real database: rows in each state, read at scrape time.
let isolation: Isolation;
let pool: Pool;
const box = testBox();

beforeAll(async () => {
  isolation = await isolate();
  pool = await createPool(isolation.databaseUrl, { maxConnections: 2 });
}, 120_000);

afterAll(async () => {
  await pool?.end();
  await isolation?.cleanup();
});

/** An endpoint row in the given health (as the recorder and the lifecycle commands leave it). */
async function endpoint(customerId: string, name: string, status: 'active' | 'paused' | 'disabled', failingForS: number | null) {
  const instance = await instanceOf(pool, box, customerId, name);
  const failingSince = failingForS === null ? null : new Date(Date.now() - failingForS * 1000).toISOString();
  await pool.query(sql.typeAlias('void')`
    INSERT INTO webhook_endpoints (instance_id, customer_id, destination_url, events, status, signing_secret_enc, failing_since, consecutive_failures)
    VALUES (${instance.instance_id}, ${customerId}, 'https://93.184.216.34/hooks', ${sql.array(['message.delivered'], 'text')}, ${status}, 'sealed', ${failingSince}, ${failingForS === null ? 0 : 3})`);
}

async function scrape(registry: Registry) {
  const [byState, failing] = await Promise.all([registry.getSingleMetric('gateway_webhook_endpoints')!.get(), registry.getSingleMetric('gateway_webhook_endpoint_failing_seconds')!.get()]);
  return { states: Object.fromEntries(byState.values.map((v) => [String(v.labels.state), v.value])), failingSeconds: failing.values[0]!.value };
}

describe('webhook endpoint health metrics', () => {
  it('count the endpoints by state and give the longest failure, at each scrape, with no instance or URL in a label', async () => {
    const registry = new Registry();
    endpointHealthMetrics(registry, pool, createLogger('test', 'silent'));
    expect(await scrape(registry)).toEqual({ states: { healthy: 0, failing: 0, paused: 0, disabled: 0 }, failingSeconds: 0 });

    const customer = await customerRow(pool, 'Metrics Clinic');
    await endpoint(customer, 'ok-1', 'active', null);
    await endpoint(customer, 'ok-2', 'active', null);
    await endpoint(customer, 'failing-short', 'active', 60);
    await endpoint(customer, 'failing-long', 'active', 7_200);
    await endpoint(customer, 'paused', 'paused', null);
    await endpoint(customer, 'gone', 'disabled', 500);

    const { states, failingSeconds } = await scrape(registry);
    expect(states).toEqual({ healthy: 2, failing: 2, paused: 1, disabled: 1 });
    // The active endpoint failing longest (the disabled one's streak is not counted).
    expect(failingSeconds).toBeGreaterThanOrEqual(7_200);
    expect(failingSeconds).toBeLessThan(7_200 + 600);

    const text = await registry.metrics();
    expect(text).not.toContain('93.184.216.34');
    expect(text).not.toMatch(/ins_/);
  });
});
