import { randomUUID } from 'node:crypto';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '@gw/config';
import { createPool, sql, z, type Pool } from '@gw/db';
import { EventCodec, newEventId, Topics } from '@gw/events';
import { createLogger, createMetrics } from '@gw/observability';
import { createPolicy } from '@gw/policy';
import { toFactRecord } from '@gw/policy-log';
import { isolate, type Isolation } from '../../../../test/support/infra.ts';
import { decideSends } from '../decide-sends/handler.ts';
import { onboarding, sendRequested } from '../decide-sends/testing.ts';
import { ChainWatch } from './chain-watch.ts';

// The chain watch over a policy log the policy handler wrote (real Postgres and registry), then
// edited behind its back, as someone with write access to the database could.
let isolation: Isolation;
let pool: Pool;
let codec: EventCodec;
let topics: Topics;
const PARTITION = 2;
const at = Date.UTC(2026, 10, 2, 9);
const customer = `cus_${randomUUID().slice(0, 8)}`;
let offset = 0;
let sent = 0;
let decide: ReturnType<typeof decideSends>;

beforeAll(async () => {
  isolation = await isolate();
  pool = await createPool(isolation.databaseUrl, { maxConnections: 3 });
  topics = new Topics(isolation.topicPrefix, 6);
  codec = new EventCodec(isolation.env.SCHEMA_REGISTRY_URL!, topics);
  await codec.init(['SendRequested', 'PolicyInputRecorded', 'SendDecided', 'PolicyEventEmitted']);
  decide = decideSends({ codec, pool, topics, logger: createLogger('policy-test', 'warn'), metrics: createMetrics('policy-test', false) }, { ...loadConfig().policy, policy: createPolicy() });
  await feed(onboarding(customer, at).map((fact) => codec.encode('PolicyInputRecorded', toFactRecord(fact, `op_${randomUUID()}`))));
}, 60_000);

afterAll(async () => {
  await pool?.end();
  await isolation?.cleanup();
});

/** Hands records to the policy handler as runStage does (decoded, with offsets). */
async function feed(encoded: Array<Promise<{ topic: string; key: string; value: Buffer; headers?: Record<string, string> }>>) {
  const events: Parameters<typeof decide>[0] = [];
  for (const r of await Promise.all(encoded)) {
    const position = offset++;
    const event = await codec.decode({ topic: r.topic, partition: PARTITION, offset: String(position), key: r.key, value: r.value, headers: r.headers ?? {}, timestamp: '0' });
    if (event?.type === 'SendRequested' || event?.type === 'PolicyInputRecorded') events.push({ offset: BigInt(position), event });
  }
  await decide(events, { topic: topics.name('customerEvents'), partition: PARTITION, heartbeat: async () => undefined, nextOffset: BigInt(offset) });
}

/** `n` more sends decided: n more policy-log entries on the partition's chain. */
async function decideMore(n: number) {
  await feed(Array.from({ length: n }, () => codec.encode('SendRequested', { ...sendRequested(customer, ++sent, at, `cmd_${randomUUID()}`), event_id: newEventId() })));
}

const LogId = z.object({ log_id: z.number() });
const logIds = () => pool.anyFirst(sql.type(LogId)`SELECT log_id FROM policy_log ORDER BY log_id`);
/** An edit made in the database: a decision turned around, its hashes left as they were. */
const tamper = (logId: number) => pool.query(sql.typeAlias('void')`UPDATE policy_log SET decision = CASE decision WHEN 'accepted' THEN 'rejected' ELSE 'accepted' END WHERE log_id = ${logId}`);

async function gauges(registry: Registry) {
  const read = async (name: string) => (await registry.getSingleMetric(name)!.get()).values[0]?.value;
  return { ok: await read('gateway_policy_chain_verify_ok'), failures: await read('gateway_policy_chain_verify_failures_total'), entries: await read('gateway_policy_chain_verified_entries_total') };
}

describe('the policy service watch over the policy log chains', () => {
  it('checks only what was appended since the last check, finds an edit of a new entry at once and of an old one at the next full walk, and stays failed', async () => {
    let now = Date.now();
    const registry = new Registry();
    const watch = new ChainWatch(pool, registry, createLogger('policy-test', 'silent'), { fullEveryMs: 3_600_000 }, () => now);

    await decideMore(4);
    expect(await watch.check()).toEqual({ entries: 4, divergences: 0, full: true });
    expect(await gauges(registry)).toEqual({ ok: 1, failures: 0, entries: 4 });

    // Three more: the next check reads those three only.
    await decideMore(3);
    expect(await watch.check()).toEqual({ entries: 3, divergences: 0, full: false });
    expect(await gauges(registry)).toEqual({ ok: 1, failures: 0, entries: 7 });

    // An entry appended and then edited before the next check: found by it.
    await decideMore(2);
    const [, , , , , , , eighth] = await logIds();
    await tamper(eighth!);
    const found = await watch.check();
    expect(found).toMatchObject({ entries: 2, full: false });
    expect(found.divergences).toBeGreaterThan(0);
    expect((await gauges(registry)).ok).toBe(0);

    // A second watch (a restarted process) walks from the start and finds the same edit; then an
    // edit of an entry it has checked already is found by the next full walk, not by the checks between.
    const again = new Registry();
    const restarted = new ChainWatch(pool, again, createLogger('policy-test', 'silent'), { fullEveryMs: 3_600_000 }, () => now);
    await tamper(eighth!); // turned back: the log is intact again
    expect(await restarted.check()).toEqual({ entries: 9, divergences: 0, full: true });
    const [first] = await logIds();
    await tamper(first!);
    expect(await restarted.check()).toEqual({ entries: 0, divergences: 0, full: false });
    expect((await gauges(again)).ok).toBe(1);
    now += 3_600_000;
    const full = await restarted.check();
    expect(full).toMatchObject({ entries: 9, full: true });
    expect(full.divergences).toBeGreaterThan(0);
    expect(await gauges(again)).toMatchObject({ ok: 0, failures: full.divergences });
    // Stays failed once found, whatever the checks after it read.
    await tamper(first!);
    await decideMore(1);
    expect(await restarted.check()).toEqual({ entries: 1, divergences: 0, full: false });
    expect((await gauges(again)).ok).toBe(0);
  });
});
