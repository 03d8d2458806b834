import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CSV_COLUMNS, verifyPolicyLog } from '@gw/compliance';
import { sql, z } from '@gw/db';
import { newEventId } from '@gw/events';
import { KafkaInspector } from '@gw/kafka';
import { toFactRecord } from '@gw/policy-log';
import { createRuntime, type Runtime } from '@gw/runtime';
import { gatewayctl } from '../../../../test/support/cli.ts';
import { isolate, type Isolation } from '../../../../test/support/infra.ts';
// The policy consumer and its test commands, reached by path as other services' int tests do.
import { onboarding, sendRequested } from '../../../policy/src/decide-sends/testing.ts';
import { startPolicyService } from '../../../policy/src/service.ts';
import { complianceDeps } from './context.ts';

// gatewayctl's compliance commands (policy-log export and verify, projections rebuild, dlq list),
// whose core is @gw/compliance (shared with the dashboard), as an operator runs them: the CLI
// process, against a log the real policy consumer wrote from commands of two customers.
let isolation: Isolation;
let runtime: Runtime;
const AT = Date.UTC(2026, 10, 2, 9);
const A = `cus_a${Date.now().toString(36)}`;
const B = `cus_b${Date.now().toString(36)}`;
const SENDS = { [A]: 6, [B]: 4 };
const TOTAL = 10;

const cli = (...args: string[]) => gatewayctl(isolation.env, ...args);
const json = (out: { stdout: string }) => JSON.parse(out.stdout.trim().split('\n').pop()!);
const Count = z.object({ n: z.number() });
const count = (query: ReturnType<typeof sql.fragment>) => runtime.pool.oneFirst(sql.type(Count)`${query}`);

/** The policy projections, in an order that does not depend on which writer made them (suppression_history without its serial id). */
async function projections() {
  const rows = (query: ReturnType<typeof sql.fragment>) => runtime.pool.any(sql.unsafe`${query}`);
  return {
    policy_log: await rows(sql.fragment`SELECT * FROM policy_log ORDER BY log_id`),
    policy_state: await rows(sql.fragment`SELECT customer_id, state FROM policy_state ORDER BY customer_id`),
    policy_offsets: await rows(sql.fragment`SELECT * FROM policy_offsets ORDER BY topic, partition`),
    policy_chain: await rows(sql.fragment`SELECT * FROM policy_chain ORDER BY partition`),
    policy_facts: await rows(sql.fragment`SELECT event_id FROM policy_facts ORDER BY event_id`),
    suppressions: await rows(sql.fragment`SELECT * FROM suppressions ORDER BY customer_id, recipient, source`),
    suppression_history: await rows(sql.fragment`
      SELECT customer_id, recipient, action, source, reason, created_by, at, instance_id, inbound_message_id, linked_from
        FROM suppression_history ORDER BY customer_id, id`),
    quota_usage: await rows(sql.fragment`SELECT * FROM quota_usage ORDER BY customer_id, window_key`),
    instance_guard: await rows(sql.fragment`SELECT * FROM instance_guard ORDER BY instance_id`),
  };
}

beforeAll(async () => {
  isolation = await isolate();
  runtime = await createRuntime('gatewayctl-compliance-test', { env: { ...process.env, ...isolation.env }, defaultMetrics: false });
  await startPolicyService(runtime);
  const { codec, kafka } = runtime;
  // Each customer registered on a plan; A's sixth recipient suppressed (a refusal in the log).
  for (const customer of [A, B]) {
    const facts = [...onboarding(customer, AT)];
    if (customer === A) facts.push({ type: 'RecipientSuppressed', customerId: A, at: AT, recipient: '+14155551006', source: 'manual', reason: 'asked', by: 'test' });
    // B: suppressions of recipients it never sends to (no decision changes), so the rebuild has
    // history to reproduce: one lifted again, and a linked-id opt-out carried over to its number.
    if (customer === B) {
      facts.push(
        { type: 'RecipientSuppressed', customerId: B, at: AT, recipient: '+14155559001', source: 'manual', reason: 'asked', by: 'ops' },
        { type: 'RecipientUnsuppressed', customerId: B, at: AT + 1, recipient: '+14155559001', source: 'manual', reason: 'asked again', by: 'ops' },
        { type: 'RecipientSuppressed', customerId: B, at: AT + 2, recipient: '123456789012345@lid', source: 'opt_out', reason: 'keyword:STOP', by: 'recipient', instanceId: 'ins_1', inboundMessageId: 'in_1' },
        { type: 'RecipientIdentityLinked', customerId: B, at: AT + 3, instanceId: 'ins_1', lid: '123456789012345@lid', phone: '+14155559002' },
      );
    }
    const records = await Promise.all(facts.map((fact) => codec.encode('PolicyInputRecorded', toFactRecord(fact, `op_${customer}`))));
    // A copy of the last fact (a source that re-emitted it): folded once.
    await kafka.send([...records, records[records.length - 1]!]);
  }
  for (let n = 1; n <= 6; n++) {
    for (const customer of [A, B]) {
      if (n > SENDS[customer]!) continue;
      await kafka.send([await codec.encode('SendRequested', { ...sendRequested(customer, n, AT), event_id: newEventId() })]);
    }
  }
  const deadline = Date.now() + 60_000;
  while ((await count(sql.fragment`SELECT count(*) AS n FROM policy_log`)) < TOTAL) {
    if (Date.now() > deadline) throw new Error('the sends were not decided in time');
    await new Promise((r) => setTimeout(r, 100));
  }
  // Committed too: a command past the consumer's committed offset would count as pending.
  const inspector = new KafkaInspector(runtime.config.kafkaBrokers, runtime.config.topicPrefix);
  const topic = runtime.topics.name('customerEvents');
  while (true) {
    const [ends, committed] = await Promise.all([inspector.endOffsets(topic), inspector.committedOffsets(runtime.topics.group('policy'), topic)]);
    if ([...ends.values()].every((r) => r.end === 0n || committed.get(r.partition) === r.end)) break;
    if (Date.now() > deadline) throw new Error('the policy consumer did not commit in time');
    await new Promise((r) => setTimeout(r, 100));
  }
}, 180_000);

afterAll(async () => {
  await runtime?.close();
  await isolation?.cleanup();
});

describe('gatewayctl policy-log, on @gw/compliance', () => {
  it('verify passes on the clean log, on its worker thread (the CLI) and on the calling thread alike', async () => {
    expect(await count(sql.fragment`SELECT count(*) AS n FROM policy_log WHERE decision = 'rejected'`)).toBe(1);
    const out = await cli('--json', 'policy-log', 'verify');
    expect(out.code, out.stdout + out.stderr).toBe(0);
    const report = json(out);
    expect(report).toMatchObject({ ok: true, customer_id: null, divergence_count: 0, divergences: [], counts: { db_rows: TOTAL, kafka_decisions: TOTAL, decisions_replayed: TOTAL, pending_commands: 0 } });
    // The report keeps its shape: no field of the customer's report slipped in.
    expect(Object.keys(report).sort()).toEqual(['counts', 'customer_id', 'divergence_count', 'divergences', 'elapsed_ms', 'events', 'events_per_second', 'ok']);

    const human = await cli('policy-log', 'verify', '--customer', A);
    expect(human.code, human.stdout).toBe(0);
    expect(human.stdout).toMatch(new RegExp(`^Policy log verification \\(customer ${A}\\): CLEAN\\n`));
    expect(human.stdout).toContain('6 decisions re-run');

    const deps = await complianceDeps(runtime.config);
    try {
      for (const replayWorker of [true, false]) {
        const inProcess = await verifyPolicyLog(deps, { replayWorker });
        expect(inProcess.divergences).toEqual([]);
        expect(inProcess.counts).toEqual(report.counts);
      }
    } finally {
      await deps.pool.end();
    }
  });

  it('export writes every entry of the range as CSV to a file, and one customer\'s as NDJSON to stdout', async () => {
    const from = new Date(AT).toISOString();
    const to = new Date(AT + 86_400_000).toISOString();
    const file = `${tmpdir()}/gatewayctl-export-${isolation.suffix}.csv`;
    const csv = await cli('--json', 'policy-log', 'export', '--from', from, '--to', to, '--format', 'csv', '--output', file);
    expect(csv.code, csv.stdout + csv.stderr).toBe(0);
    expect(json(csv)).toEqual({ exported: TOTAL, format: 'csv', file });
    const lines = readFileSync(file, 'utf8').split('\r\n').filter(Boolean);
    expect(lines[0]).toBe(CSV_COLUMNS.join(','));
    expect(lines).toHaveLength(TOTAL + 1);

    const ndjson = await cli('policy-log', 'export', '--from', from, '--to', to, '--customer', B, '--format', 'ndjson');
    expect(ndjson.code, ndjson.stderr).toBe(0);
    const entries = ndjson.stdout.trim().split('\n').map((l) => JSON.parse(l));
    expect(entries.map((e) => e.customer_id)).toEqual([B, B, B, B]);
    expect(entries.map((e) => e.log_id)).toEqual([...entries.map((e) => e.log_id)].sort((a, b) => a - b));
    expect(Object.keys(entries[0])).toEqual([...CSV_COLUMNS]);

    // A range with nothing in it: the header only.
    const empty = await cli('policy-log', 'export', '--from', to, '--to', new Date(AT + 2 * 86_400_000).toISOString(), '--format', 'csv');
    expect(empty.stdout).toBe(`${CSV_COLUMNS.join(',')}\r\n`);
  });

  it('verify reports a tampered row by log id, naming what differs from the record; clean again once restored', async () => {
    const victim = await runtime.pool.one(sql.type(z.object({ log_id: z.number(), recipient: z.string() }))`SELECT log_id, recipient FROM policy_log WHERE customer_id = ${B} ORDER BY log_id LIMIT 1`);
    await runtime.pool.query(sql.typeAlias('void')`UPDATE policy_log SET recipient = '+14155550000' WHERE log_id = ${victim.log_id}`);
    try {
      const out = await cli('--json', 'policy-log', 'verify');
      expect(out.code).toBe(1);
      const report = json(out);
      expect(new Set(report.divergences.map((d: { log_id: number }) => d.log_id))).toEqual(new Set([victim.log_id]));
      expect(report.divergences).toContainEqual({ log_id: victim.log_id, check: 'kafka_vs_db', detail: 'the record on the decisions topic and the Postgres row differ on recipient' });
      expect(report.divergences).toContainEqual({ log_id: victim.log_id, check: 'db_event', detail: 'decision_event disagrees with the columns on recipient' });
      // --customer checks the chains that hold the customer's entries whole: the operator sees the
      // other customer's tampered entry there when both customers share a partition, and not otherwise.
      const Chains = z.object({ p: z.number() });
      const chainsOf = (customer: string) => runtime.pool.anyFirst(sql.type(Chains)`SELECT DISTINCT partition_chain AS p FROM policy_log WHERE customer_id = ${customer}`);
      const [chainsA, chainsB] = [await chainsOf(A), await chainsOf(B)];
      const scoped = json(await cli('--json', 'policy-log', 'verify', '--customer', A));
      expect(scoped.divergences).toEqual(chainsA.some((p) => chainsB.includes(p)) ? report.divergences : []);
    } finally {
      await runtime.pool.query(sql.typeAlias('void')`UPDATE policy_log SET recipient = ${victim.recipient} WHERE log_id = ${victim.log_id}`);
    }
    expect((await cli('--json', 'policy-log', 'verify')).code).toBe(0);
  });

  it('dlq list reads the dead letters, and projections rebuild reproduces the log once the consumer is stopped', async () => {
    const letters = await cli('--json', 'dlq', 'list');
    expect(letters.code, letters.stderr).toBe(0);
    expect(json(letters)).toEqual([]);

    const refused = await cli('--json', 'projections', 'rebuild');
    expect(refused.code).toBe(1);
    expect(json(refused).error).toMatch(/active member/);

    const before = await projections();
    expect(before.suppression_history.length).toBeGreaterThanOrEqual(5);
    expect(before.quota_usage.length).toBeGreaterThan(0);
    await runtime.stopConsumers();
    const out = await cli('--json', 'projections', 'rebuild', '--force');
    expect(out.code, out.stdout + out.stderr).toBe(0);
    expect(json(out)).toMatchObject({ rebuilt: true, policy_log: TOTAL, kafka_conflicts: 0, replay_divergences: 0, stopped: [] });
    // Every table the consumer wrote, rebuilt from Kafka to the same rows.
    const after = await projections();
    for (const table of Object.keys(before) as Array<keyof typeof before>) expect(after[table], table).toEqual(before[table]);
    expect((await cli('--json', 'policy-log', 'verify')).code).toBe(0);
  });
});
