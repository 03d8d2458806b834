import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { loadConfig } from '@gw/config';
import { sql, z } from '@gw/db';
import { EventCodec, Topics, type SendDecided } from '@gw/events';
import { KafkaClient } from '@gw/kafka';
import { createLogger } from '@gw/observability';
import { verifyPolicyLog } from '@gw/compliance';
import { readPolicyStates } from '@gw/policy-log';
import { complianceDeps } from '../../services/gatewayctl/src/compliance/context.ts';
import { allowPurposes, suppress } from '../../services/gatewayctl/src/policy/commands.ts';
import { demoAccount, withOperator, type DemoAccount } from '../support/accounts.ts';
import { gatewayctl } from '../support/cli.ts';
import { send } from '../support/http.ts';
import { readTopic } from '../support/topic-reader.ts';
import { until, useStack } from '../support/suite.ts';
import { parseCsv } from '../support/csv.ts';

const suite = useStack();
const started = new Date(Date.now() - 60_000);

const Count = z.object({ n: z.number() });
/** The count a query names `n`. */
const count = (query: ReturnType<typeof sql.fragment>) => suite.db.oneFirst(sql.type(Count)`${query}`);
const cli = (...args: string[]) => gatewayctl(suite.stack.env, ...args);
const json = (out: { stdout: string }) => JSON.parse(out.stdout.trim().split('\n').pop()!);

/**
 * The six rebuilt tables, ordered; updated_at is the wall clock of the write, not part of the state.
 * Whole rows, untyped (sql.unsafe): every column they have is compared.
 */
async function snapshot() {
  const q = (query: ReturnType<typeof sql.unsafe>) => suite.db.any(query);
  return {
    // Each customer's state as the engine reads it (snapshot and tail): the consumer stored sends as
    // tails, the rebuild stores snapshots (docs/decisions.md "Policy state snapshots").
    policy_state: [...(await readPolicyStates(suite.db, await suite.db.anyFirst(sql.type(z.object({ customer_id: z.string() }))`SELECT customer_id FROM policy_state`)))]
      .map(([customerId, stored]) => [customerId, stored.state] as const)
      .sort(([a], [b]) => a.localeCompare(b)),
    policy_offsets: await q(sql.unsafe`SELECT topic, partition, next_offset FROM policy_offsets ORDER BY topic, partition`),
    policy_chain: await q(sql.unsafe`SELECT partition, head_hash, last_log_id FROM policy_chain ORDER BY partition`),
    policy_log: await q(sql.unsafe`SELECT * FROM policy_log ORDER BY log_id`),
    suppressions: await q(sql.unsafe`SELECT * FROM suppressions ORDER BY customer_id, recipient, source`),
    // The history's ids are a sequence the rebuild does not reset, and it takes the partitions one
    // after another where the consumer interleaved them: compared without the ids, in each customer's order.
    suppression_history: await q(sql.unsafe`SELECT customer_id, recipient, action, source, reason, created_by, at, instance_id, inbound_message_id FROM suppression_history ORDER BY customer_id, id`),
    quota_usage: await q(sql.unsafe`SELECT * FROM quota_usage ORDER BY customer_id, window_key`),
    sequence: await q(sql.unsafe`SELECT last_value, is_called FROM policy_log_log_id_seq`),
  };
}

let accounts: DemoAccount[] = [];
let sent = 0;
const SUPPRESSED = '+14155550999';

/** Sends per account; raise it (COMPLIANCE_SENDS=2000) to measure the verify rate on more data. */
const PER_ACCOUNT = Number(process.env.COMPLIANCE_SENDS ?? 8);

async function sendMix(label: string) {
  const jobs: Array<() => Promise<Awaited<ReturnType<typeof send>>>> = [];
  for (const [n, account] of accounts.entries()) {
    for (let i = 0; i < PER_ACCOUNT; i++) {
      const purpose = i % 4 === 3 ? 'support' : i % 2 === 0 ? 'transactional' : 'operational';
      const phone = i % 8 === 5 ? SUPPRESSED : `+1415${String(n * 100_000 + i).padStart(7, '0')}`;
      jobs.push(() => send(suite.stack.apiUrl, account.api_key, { instance_id: account.instance_id, phone, message: `${label} ${n}/${i}, "quoted", with commas`, message_purpose: purpose }));
    }
  }
  const results: Array<Awaited<ReturnType<typeof send>>> = [];
  let next = 0;
  await Promise.all(Array.from({ length: 8 }, async () => {
    while (next < jobs.length) {
      const i = next++;
      results[i] = await jobs[i]!();
    }
  }));
  sent += jobs.length;
  await until(async () => (await count(sql.fragment`SELECT count(*) AS n FROM policy_log`)) >= sent, 120_000, 'every send to be decided');
  return results;
}

describe('compliance tooling: policy-log show / export / verify, projections rebuild', () => {
  it('sends a mix of accepted and rejected messages', async () => {
    accounts = [await demoAccount(suite.stack), await demoAccount(suite.stack), await demoAccount(suite.stack), await demoAccount(suite.stack)];
    await withOperator(suite.stack, async ({ pool, facts }) => {
      for (const account of accounts) await suppress(pool, facts, { customerId: account.customer_id, phone: SUPPRESSED, reason: 'asked to stop', by: 'compliance-test' });
      // The second customer may not send support messages.
      await allowPurposes(pool, facts, { customerId: accounts[3]!.customer_id, purposes: ['transactional', 'operational'], by: 'compliance-test' });
    });
    const results = await sendMix('first');
    const statuses = results.map((r) => r.status);
    expect(statuses.every((s) => s === 200 || s === 422 || s === 403), JSON.stringify(results.map((r) => r.body))).toBe(true);
    const decisions = await suite.db.any(sql.type(z.object({ decision: z.string(), error_code: z.string().nullable(), n: z.number() }))`SELECT decision, error_code, count(*) AS n FROM policy_log GROUP BY 1, 2`);
    console.info('decisions', decisions);
    expect(decisions.some((d) => d.decision === 'accepted')).toBe(true);
    expect(decisions.some((d) => d.error_code === 'recipient_suppressed' || d.decision === 'rejected')).toBe(true);
    expect(await count(sql.fragment`SELECT count(DISTINCT error_code) AS n FROM policy_log WHERE decision = 'rejected'`)).toBeGreaterThanOrEqual(2);
  });

  it('policy-log show returns the entry with its inputs, rules, chain fields and delivery', async () => {
    const { log_id, command_id } = await suite.db.one(sql.type(z.object({ log_id: z.number(), command_id: z.string() }))`SELECT log_id, command_id FROM policy_log WHERE decision = 'rejected' ORDER BY log_id LIMIT 1`);
    const started = Date.now();
    const out = await cli('--json', 'policy-log', 'show', String(log_id));
    expect(out.code, out.stderr).toBe(0);
    const entry = json(out);
    expect(entry).toMatchObject({ log_id, command_id, decision: 'rejected', partition_chain: expect.any(Number), prev_hash: expect.stringMatching(/^[0-9a-f]{64}$/), entry_hash: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(entry.error_code).toEqual(expect.any(String));
    expect(entry.inputs).toMatchObject({ customer_id: expect.any(String), instance_id: expect.any(String), recipient: expect.any(String), message_purpose: expect.any(String), message_digest: expect.any(String), source: 'api', occurred_at: expect.any(Number) });
    expect(entry.inputs.message).toBeUndefined();
    expect(JSON.stringify(entry)).not.toContain('quoted');
    expect(entry.rules.length).toBeGreaterThan(5);
    expect(entry.rules.find((r: { outcome: string }) => r.outcome === 'fail')).toBeTruthy();
    console.info(`show took ${Date.now() - started} ms (process start included)`);

    const accepted = await suite.db.oneFirst(sql.type(z.object({ log_id: z.number() }))`SELECT log_id FROM policy_log WHERE decision = 'accepted' ORDER BY log_id LIMIT 1`);
    await until(async () => (await count(sql.fragment`SELECT count(*) AS n FROM deliveries d JOIN policy_log p USING (command_id) WHERE p.log_id = ${accepted} AND d.state <> 'dispatching'`)) === 1, 30_000, 'the delivery');
    const delivered = json(await cli('--json', 'policy-log', 'show', String(accepted)));
    expect(delivered.deliveries).toHaveLength(1);
    expect(delivered.deliveries[0].state).toBe('dispatched');
    const human = await cli('policy-log', 'show', String(accepted));
    expect(human.stdout).toContain('module_enabled');
    console.info(human.stdout);

    expect((await cli('--json', 'policy-log', 'show', '999999')).code).toBe(1);
  });

  it('policy-log export streams every entry of the range as NDJSON and as CSV', async () => {
    const to = new Date(Date.now() + 60_000).toISOString();
    const total = await count(sql.fragment`SELECT count(*) AS n FROM policy_log`);
    // To files: the CLI helper buffers a child's stdout (1 MB), too little for a larger log.
    const file = (ext: string) => `${tmpdir()}/compliance-export-${suite.stack.isolation.suffix}.${ext}`;
    const ndjson = await cli('--json', 'policy-log', 'export', '--from', started.toISOString(), '--to', to, '--format', 'ndjson', '--output', file('ndjson'));
    expect(ndjson.code, ndjson.stdout + ndjson.stderr).toBe(0);
    expect(json(ndjson)).toMatchObject({ exported: total, format: 'ndjson' });
    const lines = readFileSync(file('ndjson'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(lines).toHaveLength(total);
    expect(lines.map((l) => l.log_id)).toEqual([...lines.map((l) => l.log_id)].sort((a, b) => a - b));
    expect(Array.isArray(lines[0].reasons)).toBe(true);

    const csv = await cli('policy-log', 'export', '--from', started.toISOString(), '--to', to, '--format', 'csv', '--output', file('csv'));
    expect(csv.code, csv.stdout + csv.stderr).toBe(0);
    const rows = parseCsv(readFileSync(file('csv'), 'utf8'));
    const header = rows[0]!;
    expect(header).toContain('reasons');
    expect(rows.slice(1)).toHaveLength(total);
    for (const row of rows.slice(1)) expect(row).toHaveLength(header.length);
    const reasons = JSON.parse(rows[1]![header.indexOf('reasons')]!);
    expect(reasons).toEqual(lines[0].reasons);
    expect(rows[1]![header.indexOf('entry_hash')]).toBe(lines[0].entry_hash);
    expect(rows.slice(1).map((r) => Number(r[0]))).toEqual(lines.map((l) => l.log_id));

    // To stdout, one customer, a range that ends before the later sends.
    const first = await suite.db.one(sql.type(z.object({ customer_id: z.string(), decided_at: z.date() }))`SELECT customer_id, decided_at FROM policy_log ORDER BY log_id LIMIT 1`);
    const cutoff = await suite.db.oneFirst(sql.type(z.object({ decided_at: z.date() }))`SELECT decided_at FROM policy_log WHERE customer_id = ${first.customer_id} ORDER BY log_id OFFSET 4 LIMIT 1`);
    const piped = await cli('policy-log', 'export', '--from', started.toISOString(), '--to', cutoff.toISOString(), '--customer', first.customer_id, '--format', 'csv');
    expect(piped.code, piped.stderr).toBe(0);
    const pipedRows = parseCsv(piped.stdout).slice(1);
    expect(pipedRows.length).toBe(
      await count(sql.fragment`SELECT count(*) AS n FROM policy_log WHERE customer_id = ${first.customer_id} AND decided_at >= ${started.toISOString()}::timestamptz AND decided_at < ${cutoff.toISOString()}::timestamptz`),
    );
    expect(new Set(pipedRows.map((r) => r[header.indexOf('customer_id')]))).toEqual(new Set([first.customer_id]));

  });

  it('policy-log verify passes on the clean log', async () => {
    const out = await cli('--json', 'policy-log', 'verify');
    const report = json(out);
    expect(report.divergences).toEqual([]);
    expect(out.code).toBe(0);
    expect(report.counts.decisions_replayed).toBe(sent);
    console.info('verify (clean)', report.counts, `${report.events} events in ${report.elapsed_ms} ms: ${report.events_per_second} events/s`);
    const human = await cli('policy-log', 'verify', '--customer', accounts[0]!.customer_id);
    expect(human.code, human.stdout).toBe(0);
    console.info(human.stdout);
  });

  it('policy-log verify reports a tampered Postgres row, and is clean again once it is restored', async () => {
    const victim = await suite.db.one(sql.type(z.object({ log_id: z.number(), decision: z.string(), recipient: z.string() }))`SELECT log_id, decision, recipient FROM policy_log WHERE decision = 'rejected' ORDER BY log_id DESC LIMIT 1`);
    await suite.db.query(sql.typeAlias('void')`UPDATE policy_log SET decision = 'accepted' WHERE log_id = ${victim.log_id}`);
    let out = await cli('--json', 'policy-log', 'verify');
    let report = json(out);
    expect(out.code).toBe(1);
    expect(report.divergences.length).toBeGreaterThan(0);
    expect(new Set(report.divergences.map((d: { log_id: number }) => d.log_id))).toEqual(new Set([victim.log_id]));
    console.info('tampered decision', report.divergences);

    await suite.db.query(sql.typeAlias('void')`UPDATE policy_log SET decision = ${victim.decision}, recipient = '+14155550000' WHERE log_id = ${victim.log_id}`);
    report = json(await cli('--json', 'policy-log', 'verify'));
    expect(new Set(report.divergences.map((d: { log_id: number }) => d.log_id))).toEqual(new Set([victim.log_id]));

    // decision_event is the copy the consumer re-emits on redelivery: editing it alone is caught too.
    await suite.db.query(sql.typeAlias('void')`UPDATE policy_log SET recipient = ${victim.recipient} WHERE log_id = ${victim.log_id}`);
    await suite.db.query(sql.typeAlias('void')`UPDATE policy_log SET decision_event = jsonb_set(decision_event, '{decision}', '"accepted"') WHERE log_id = ${victim.log_id}`);
    report = json(await cli('--json', 'policy-log', 'verify'));
    expect(report.divergences.map((d: { log_id: number; check: string }) => [d.log_id, d.check])).toEqual([[victim.log_id, 'db_event']]);

    await suite.db.query(sql.typeAlias('void')`UPDATE policy_log SET decision_event = jsonb_set(decision_event, '{decision}', to_jsonb(decision)) WHERE log_id = ${victim.log_id}`);
    out = await cli('--json', 'policy-log', 'verify');
    expect(json(out).divergences).toEqual([]);
    expect(out.code).toBe(0);
  });

  it('projections rebuild refuses while the policy consumer runs, and reproduces the projections once it is stopped', async () => {
    const refused = await cli('--json', 'projections', 'rebuild');
    expect(refused.code).toBe(1);
    expect(json(refused).error).toMatch(/active member/);

    await until(async () => (await count(sql.fragment`SELECT count(*) AS n FROM deliveries WHERE state = 'dispatching'`)) === 0, 30_000, 'deliveries to settle');
    await suite.stack.kill('policy', 'SIGTERM');
    const before = await snapshot();
    const out = await cli('--json', 'projections', 'rebuild', '--force');
    expect(out.code, out.stdout + out.stderr).toBe(0);
    const report = json(out);
    console.info('rebuild', report);
    expect(report).toMatchObject({ rebuilt: true, policy_log: sent, kafka_conflicts: 0, replay_divergences: 0, stopped: [] });
    const after = await snapshot();
    expect(after.policy_log).toEqual(before.policy_log);
    expect(after.policy_chain).toEqual(before.policy_chain);
    expect(after.policy_offsets).toEqual(before.policy_offsets);
    expect(after.suppressions).toEqual(before.suppressions);
    expect(after.suppression_history).toEqual(before.suppression_history);
    expect(before.suppression_history.length).toBeGreaterThan(0);
    expect(after.quota_usage).toEqual(before.quota_usage);
    expect(after.policy_state).toEqual(before.policy_state);
    expect(after.sequence).toEqual(before.sequence);

    // The consumer carries on from the rebuilt projections: the chain and the log ids continue.
    await suite.stack.start('policy');
    await sendMix('after-rebuild');
    const out2 = await cli('--json', 'policy-log', 'verify');
    expect(json(out2).divergences).toEqual([]);
    expect(out2.code).toBe(0);
  });

  it('policy-log verify reports a forged record on the decisions topic', async () => {
    const decided = (await readTopic(suite.stack.env, 'policyDecisions', 1500)).filter((e) => e.type === 'SendDecided');
    const original = decided.find((e) => e.payload.decision === 'rejected')!.payload as SendDecided;
    const forged: SendDecided = { ...original, decision: 'accepted', error_code: null, error_message: null };
    const config = loadConfig(suite.stack.env);
    const topics = new Topics(config.topicPrefix, config.topicPartitions);
    const codec = new EventCodec(config.schemaRegistryUrl, topics);
    await codec.init(['SendDecided']);
    const kafka = new KafkaClient({ brokers: config.kafkaBrokers, clientId: 'compliance-forger', logger: createLogger('forger', 'error') });
    await kafka.send([await codec.encode('SendDecided', forged)]);
    await kafka.close();

    const out = await cli('--json', 'policy-log', 'verify');
    const report = json(out);
    console.info('forged record', report.divergences);
    expect(out.code).toBe(1);
    expect(new Set(report.divergences.map((d: { log_id: number }) => d.log_id))).toEqual(new Set([original.log_id]));
    expect(report.divergences.map((d: { check: string }) => d.check)).toContain('kafka_conflict');
    // Both records are read again to name what the forger changed.
    const conflict = report.divergences.find((d: { check: string }) => d.check === 'kafka_conflict') as { detail: string };
    expect(conflict.detail).toMatch(/on decision, error_code, error_message$/);

    // Without worker threads (everything on the calling thread) verify finds exactly the same.
    const deps = await complianceDeps(config);
    try {
      const inThread = await verifyPolicyLog(deps, { replayWorker: false });
      expect(inThread.divergences).toEqual(report.divergences);
      expect(inThread.counts).toEqual(report.counts);
    } finally {
      await deps.pool.end();
    }
  });
});
