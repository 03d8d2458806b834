import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '@gw/config';
import { createPool, sql, z, type Pool } from '@gw/db';
import { EventCodec, newEventId, Topics, type SendDecided, type SendRequested } from '@gw/events';
import { createLogger, createMetrics } from '@gw/observability';
import { createPolicy, initialPolicyState, type PolicyEvent } from '@gw/policy';
import { engineStep, GENESIS_HASH, readPolicyStates, toFactRecord } from '@gw/policy-log';
import { isolate, type Isolation } from '../../../../test/support/infra.ts';
import { decideSends } from './handler.ts';
import { LogIdBlock } from './log-ids.ts';
import { onboarding as onboardingFacts, sendRequested } from './testing.ts';

// The policy consumer's batch handler against real Postgres and the real schema registry, fed
// records as Kafka hands them over. Two handlers stand for two consumer processes taking turns
// on one partition (a rebalance), which is what the fast path's fence is for.
let isolation: Isolation;
let pool: Pool;
let codec: EventCodec;
let topics: Topics;
const PARTITION = 3;
const POLICY = createPolicy();
const at = Date.UTC(2026, 10, 2, 9);
let offset = 0;

beforeAll(async () => {
  isolation = await isolate();
  pool = await createPool(isolation.databaseUrl, { maxConnections: 4 });
  topics = new Topics(isolation.topicPrefix, 6);
  codec = new EventCodec(isolation.env.SCHEMA_REGISTRY_URL!, topics);
  await codec.init(['SendRequested', 'PolicyInputRecorded', 'SendDecided', 'PolicyEventEmitted', 'GatewayEventEmitted']);
}, 60_000);

afterAll(async () => {
  await pool?.end();
  await isolation?.cleanup();
});

function handler(metrics = createMetrics('policy-test', false)) {
  const runtime = { codec, pool, topics, logger: createLogger('policy-test', 'warn'), metrics };
  return decideSends(runtime, { ...loadConfig().policy, policy: POLICY });
}

/** Hands records to a handler as runStage does: decoded (through the registry), with their offsets and the offset after the batch. */
async function feed(run: ReturnType<typeof decideSends>, encoded: Array<Promise<{ topic: string; key: string; value: Buffer; headers?: Record<string, string> }>>) {
  const events: Parameters<typeof run>[0] = [];
  for (const r of await Promise.all(encoded)) {
    const at = offset++;
    const event = await codec.decode({ topic: r.topic, partition: PARTITION, offset: String(at), key: r.key, value: r.value, headers: r.headers ?? {}, timestamp: '0' });
    if (event?.type === 'SendRequested' || event?.type === 'PolicyInputRecorded') events.push({ offset: BigInt(at), event });
  }
  return run(events, { topic: topics.name('customerEvents'), partition: PARTITION, heartbeat: async () => undefined, nextOffset: BigInt(offset) });
}

const fact = (event: PolicyEvent) => codec.encode('PolicyInputRecorded', toFactRecord(event, `op_${randomUUID()}`));
const command = (customerId: string, n: number, correlationId = `cmd_${randomUUID()}`) =>
  codec.encode('SendRequested', { ...sendRequested(customerId, n, at, correlationId), event_id: newEventId() });
const onboarding = (customerId: string) => onboardingFacts(customerId, at);

async function decisions(out: Array<{ value: Buffer; topic: string; key: string; headers?: Record<string, string> }>): Promise<SendDecided[]> {
  const decoded = [];
  for (const r of out) {
    const event = await codec.decode({ topic: r.topic, partition: PARTITION, offset: '0', key: r.key, value: r.value, headers: r.headers ?? {}, timestamp: '0' });
    if (event?.type === 'SendDecided') decoded.push(event.payload);
  }
  return decoded;
}

const ChainRow = z.object({ log_id: z.string(), command_id: z.string(), prev_hash: z.string(), entry_hash: z.string() });
const chain = () => pool.any(sql.type(ChainRow)`SELECT log_id::text, command_id, prev_hash, entry_hash FROM policy_log WHERE partition_chain = ${PARTITION} ORDER BY log_id`);
const Used = z.object({ used: z.number() });
const quotaUsed = (customer: string) => pool.anyFirst(sql.type(Used)`SELECT used FROM quota_usage WHERE customer_id = ${customer} AND length(window_key) = 10`);
// Every method of the pool that runs a statement (the handler's own statements go through these).
const QUERY_METHODS = new Set(['any', 'anyFirst', 'exists', 'many', 'manyFirst', 'maybeOne', 'maybeOneFirst', 'one', 'oneFirst', 'query', 'stream']);

describe('policy batch handler', () => {
  it('two processes taking turns on a partition keep one chain: a stale process is fenced off and redoes its batch', async () => {
    const customer = `cus_${randomUUID().slice(0, 8)}`;
    const a = handler();
    const b = handler();

    const first = await decisions(await feed(a, [...onboarding(customer).map(fact), command(customer, 1)]));
    const second = await decisions(await feed(b, [command(customer, 2), command(customer, 3)]));
    // A still holds the partition as it left it after its first batch; B has moved it on since.
    const third = await decisions(await feed(a, [command(customer, 4)]));

    expect([...first, ...second, ...third].map((d) => d.decision)).toEqual(['accepted', 'accepted', 'accepted', 'accepted']);
    const rows = await chain();
    expect(rows.map((r) => r.command_id)).toEqual([...first, ...second, ...third].map((d) => d.correlation_id));
    expect(rows[0]!.prev_hash).toBe(GENESIS_HASH);
    for (let i = 1; i < rows.length; i++) expect(rows[i]!.prev_hash).toBe(rows[i - 1]!.entry_hash);
    expect(third[0]!.prev_hash).toBe(second[1]!.entry_hash);
    // The quota counted every accepted send once, whichever process decided it.
    expect(await quotaUsed(customer)).toEqual([4]);
    const offsets = await pool.any(sql.type(z.object({ next_offset: z.string() }))`SELECT next_offset::text FROM policy_offsets WHERE partition = ${PARTITION}`);
    expect(offsets).toEqual([{ next_offset: String(offset) }]);
  });

  it('after its first batch a process decides from memory with one statement per batch', async () => {
    const customer = `cus_${randomUUID().slice(0, 8)}`;
    const statements: string[] = [];
    const counted = new Proxy(pool, {
      get(target, prop, receiver) {
        if (typeof prop === 'string' && QUERY_METHODS.has(prop)) {
          const method = Reflect.get(target, prop, receiver) as (query: { sql: string }, ...rest: unknown[]) => unknown;
          return (query: { sql: string }, ...rest: unknown[]) => (statements.push(query.sql), method.call(target, query, ...rest));
        }
        return Reflect.get(target, prop, receiver);
      },
    });
    const run = decideSends({ codec, pool: counted, topics, logger: createLogger('policy-test', 'warn'), metrics: createMetrics('policy-test', false) }, { ...loadConfig().policy, logIdBlock: 64, policy: POLICY });
    await feed(run, [...onboarding(customer).map(fact), command(customer, 1)]);
    statements.length = 0;
    const out = await decisions(await feed(run, [command(customer, 2), command(customer, 3)]));
    expect(out.map((d) => d.decision)).toEqual(['accepted', 'accepted']);
    expect(statements).toHaveLength(1);
    expect(statements[0]).toMatch(/policy_apply_batch/);
  });

  it('a command appended twice is decided once: the second copy re-emits the recorded decision', async () => {
    const customer = `cus_${randomUUID().slice(0, 8)}`;
    const run = handler();
    const [original] = await decisions(await feed(run, [...onboarding(customer).map(fact), command(customer, 1, `cmd_twice_${customer}`)]));
    const again = await decisions(await feed(run, [command(customer, 2), command(customer, 1, `cmd_twice_${customer}`)]));
    expect(again).toHaveLength(2);
    expect(again[1]).toMatchObject({ correlation_id: original!.correlation_id, log_id: original!.log_id, event_id: original!.event_id, entry_hash: original!.entry_hash });
    const rows = await pool.any(sql.type(z.object({ log_id: z.number() }))`SELECT log_id FROM policy_log WHERE command_id = ${original!.correlation_id}`);
    expect(rows).toHaveLength(1);
    expect(await quotaUsed(customer)).toEqual([2]);
  });

  it('suppressions follow the facts in order within a batch, and a suppressed recipient is refused', async () => {
    const customer = `cus_${randomUUID().slice(0, 8)}`;
    const run = handler();
    const recipient = '+14155551001';
    await feed(run, onboarding(customer).map(fact));
    const out = await decisions(
      await feed(
        run,
        [
          fact({ type: 'RecipientSuppressed', customerId: customer, at, recipient, source: 'manual', reason: 'asked', by: 'ops' }),
          fact({ type: 'RecipientUnsuppressed', customerId: customer, at, recipient, source: 'manual', by: 'ops', reason: 'asked again' }),
          fact({ type: 'RecipientSuppressed', customerId: customer, at, recipient, source: 'opt_out', reason: 'keyword:STOP', by: 'recipient', instanceId: 'ins_1', inboundMessageId: 'in_1' }),
          command(customer, 1),
        ],
      ),
    );
    expect(out.map((d) => d.error_code)).toEqual(['recipient_suppressed']);
    const rows = await pool.any(sql.type(z.object({ source: z.string() }))`SELECT source FROM suppressions WHERE customer_id = ${customer} ORDER BY source`);
    expect(rows).toEqual([{ source: 'opt_out' }]);
    // Every change stays in the history, in order, with its reason and (for an opt-out) the inbound message that caused it.
    const history = await pool.any(sql.type(z.object({ action: z.string(), source: z.string(), reason: z.string(), created_by: z.string(), instance_id: z.string().nullable(), inbound_message_id: z.string().nullable() }))`
      SELECT action, source, reason, created_by, instance_id, inbound_message_id FROM suppression_history WHERE customer_id = ${customer} ORDER BY id`);
    expect(history).toEqual([
      { action: 'suppressed', source: 'manual', reason: 'asked', created_by: 'ops', instance_id: null, inbound_message_id: null },
      { action: 'unsuppressed', source: 'manual', reason: 'asked again', created_by: 'ops', instance_id: null, inbound_message_id: null },
      { action: 'suppressed', source: 'opt_out', reason: 'keyword:STOP', created_by: 'recipient', instance_id: 'ins_1', inbound_message_id: 'in_1' },
    ]);
  });

  it('a linked id (@lid) opt-out moves to the number once the link is learned, in the projections as in the decision; an opt-in by the linked id lifts both', async () => {
    const customer = `cus_${randomUUID().slice(0, 8)}`;
    const run = handler();
    const lid = '123456789012345@lid';
    const phone = '+14155551001'; // what command(customer, 1) sends to
    const facts: PolicyEvent[] = [
      { type: 'RecipientSuppressed', customerId: customer, at, recipient: lid, source: 'opt_out', reason: 'keyword:STOP', by: 'recipient', instanceId: 'ins_1', inboundMessageId: 'in_1' },
      { type: 'RecipientIdentityLinked', customerId: customer, at: at + 1000, instanceId: 'ins_1', lid, phone },
    ];
    await feed(run, onboarding(customer).map(fact));
    const out = await decisions(await feed(run, [...facts.map(fact), command(customer, 1)]));
    expect(out.map((d) => d.error_code)).toEqual(['recipient_suppressed']);
    const Current = z.object({ recipient: z.string(), source: z.string(), reason: z.string() });
    const current = (id: string) => pool.any(sql.type(Current)`SELECT recipient, source, reason FROM suppressions WHERE customer_id = ${id} ORDER BY recipient`);
    expect(await current(customer)).toEqual([
      { recipient: phone, source: 'opt_out', reason: 'keyword:STOP' },
      { recipient: lid, source: 'opt_out', reason: 'keyword:STOP' },
    ]);
    const History = z.object({ recipient: z.string(), action: z.string(), linked_from: z.string().nullable() });
    const history = (id: string) => pool.any(sql.type(History)`SELECT recipient, action, linked_from FROM suppression_history WHERE customer_id = ${id} ORDER BY id`);
    // The linked id's row, then the number's, carried over from it.
    expect(await history(customer)).toEqual([
      { recipient: lid, action: 'suppressed', linked_from: null },
      { recipient: phone, action: 'suppressed', linked_from: lid },
    ]);

    const optIn: PolicyEvent = { type: 'RecipientUnsuppressed', customerId: customer, at: at + 2000, recipient: lid, source: 'opt_out', by: 'recipient', instanceId: 'ins_1' };
    await feed(run, [fact(optIn)]);
    expect(await current(customer)).toEqual([]);
    expect((await history(customer)).slice(2)).toEqual([
      { recipient: lid, action: 'unsuppressed', linked_from: null },
      { recipient: phone, action: 'unsuppressed', linked_from: lid },
    ]);

    // The projection rebuild writes these tables through the same statement, from the same batches:
    // services/gatewayctl/src/compliance/compliance.int.test.ts compares the two.
  });

  it('log ids come out in increasing numeric order across blocks, and above whatever a chain already holds', async () => {
    // Blocks that cross from four digits to five: sorted as text, 10000 would come before 9996.
    await pool.query(sql.type(z.object({ setval: z.number() }))`SELECT setval('policy_log_log_id_seq', 9990)`);
    const block = new LogIdBlock(16);
    const taken: number[] = [];
    for (let i = 0; i < 40; i++) taken.push(...(await block.take(pool, 1 + (i % 3), 0)));
    for (let i = 1; i < taken.length; i++) expect(taken[i]).toBeGreaterThan(taken[i - 1]!);
    expect(taken[0]).toBeLessThan(10_000);
    expect(taken[taken.length - 1]).toBeGreaterThan(10_000);
    const last = taken[taken.length - 1]!;
    const [next] = await block.take(pool, 1, last + 1000);
    expect(next).toBeGreaterThan(last);
    const lastValue = await pool.oneFirst(sql.type(z.object({ v: z.number() }))`SELECT last_value AS v FROM policy_log_log_id_seq`);
    expect(next).toBeLessThanOrEqual(lastValue);
  });
});

describe('a customer\'s state stored as a snapshot and a tail (issue 28)', () => {
  const TailRows = z.object({ n: z.number(), events: z.number().nullable() });
  const tailOf = (customer: string) => pool.one(sql.type(TailRows)`SELECT count(*)::int AS n, sum(json_array_length(events))::int AS events FROM policy_state_tail WHERE customer_id = ${customer}`);

  it('a batch of sends appends its events to the tail; a snapshot every few events or on a plan change clears it; a new process reads snapshot and tail as the state the engine holds', async () => {
    const customer = `cus_${randomUUID().slice(0, 8)}`;
    const every = 5;
    const run = decideSends({ codec, pool, topics, logger: createLogger('policy-test', 'warn'), metrics: createMetrics('policy-test', false) }, { ...loadConfig().policy, snapshotEveryEvents: every, policy: POLICY });
    // The same inputs through the pure engine: what the stored state must fold back to.
    let expected = initialPolicyState(customer);
    const inputs: Array<{ fact: PolicyEvent } | { send: SendRequested }> = [];
    const batch = async (handle: ReturnType<typeof decideSends>, items: Array<{ fact: PolicyEvent } | { send: SendRequested }>) => {
      inputs.push(...items);
      for (const item of items) {
        const step = engineStep('fact' in item ? { type: 'PolicyInputRecorded', payload: toFactRecord(item.fact, 'corr') } : { type: 'SendRequested', payload: item.send }, expected, POLICY);
        if (step.kind !== 'ignored') expected = step.state;
      }
      return decisions(await feed(handle, items.map((item) => ('fact' in item ? fact(item.fact) : codec.encode('SendRequested', item.send)))));
    };
    const sendNo = (n: number) => ({ send: { ...sendRequested(customer, n, at), event_id: newEventId() } });

    await batch(run, onboarding(customer).map((f) => ({ fact: f })));
    expect(await tailOf(customer)).toEqual({ n: 0, events: null });
    // Two sends: one event each (the SendDecided), appended as one row.
    await batch(run, [sendNo(1), sendNo(2)]);
    expect(await tailOf(customer)).toEqual({ n: 1, events: 2 });
    await batch(run, [sendNo(3)]);
    expect(await tailOf(customer)).toEqual({ n: 2, events: 3 });
    // Reaching the limit: a snapshot, and the tail is gone.
    await batch(run, [sendNo(4), sendNo(5)]);
    expect(await tailOf(customer)).toEqual({ n: 0, events: null });
    await batch(run, [sendNo(6)]);
    expect(await tailOf(customer)).toEqual({ n: 1, events: 1 });
    expect((await readPolicyStates(pool, [customer])).get(customer)).toEqual({ state: JSON.parse(JSON.stringify(expected)), tailEvents: 1 });

    // A module switch is not a send: it writes the snapshot at once (the PBX route reads policy_state alone).
    await batch(run, [{ fact: { type: 'ModuleToggled', customerId: customer, at: at + 7 * 60_000, module: 'pbx', enabled: true, by: 'test' } }]);
    expect(await tailOf(customer)).toEqual({ n: 0, events: null });
    await batch(run, [sendNo(8)]);

    // Another process (nothing in memory) takes the partition over: it decides from snapshot and tail.
    const next = decideSends({ codec, pool, topics, logger: createLogger('policy-test', 'warn'), metrics: createMetrics('policy-test', false) }, { ...loadConfig().policy, snapshotEveryEvents: every, policy: POLICY });
    const decided = await batch(next, [sendNo(9), sendNo(10)]);
    expect(decided.map((d) => d.decision)).toEqual(['accepted', 'accepted']);
    const stored = (await readPolicyStates(pool, [customer])).get(customer)!;
    expect(stored.state).toEqual(JSON.parse(JSON.stringify(expected)));
    expect(stored.tailEvents).toBe(3);
    expect(await quotaUsed(customer)).toEqual([9]);
  });
});

describe('the number guard in the policy consumer (issue 27)', () => {
  const GuardRow = z.object({
    customer_id: z.string(),
    first_connected_ms: z.number().nullable(),
    age_days: z.number().nullable(),
    first_contacts_today: z.number(),
    restricted_until_ms: z.number().nullable(),
    restriction_signal: z.string().nullable(),
    restriction_signals: z.number(),
    updated_ms: z.number(),
  });
  const guardRow = (instanceId: string) =>
    pool.maybeOne(sql.type(GuardRow)`
      SELECT customer_id, (extract(epoch FROM first_connected_at) * 1000)::float8 AS first_connected_ms, age_days, first_contacts_today,
             (extract(epoch FROM restricted_until) * 1000)::float8 AS restricted_until_ms, restriction_signal, restriction_signals,
             (extract(epoch FROM updated_at) * 1000)::float8 AS updated_ms
        FROM instance_guard WHERE instance_id = ${instanceId}`);

  it('a restriction signal restricts the instance: InstanceRestricted published, the customer told by instance.connection_updated, instance_guard written, the metric counted', async () => {
    const customer = `cus_${randomUUID().slice(0, 8)}`;
    const instanceId = `ins_${randomUUID().slice(0, 8)}`;
    await pool.query(sql.typeAlias('void')`INSERT INTO customers (id, name) VALUES (${customer}, 'Guard Co')`);
    await pool.query(sql.typeAlias('void')`
      INSERT INTO instances (id, customer_id, name, manager_url, manager_instance, manager_api_key_enc)
      VALUES (${instanceId}, ${customer}, 'front desk', 'http://127.0.0.1:9', 'front-desk', 'unused')`);
    const metrics = createMetrics('policy-test', false);
    const run = handler(metrics);
    const connectedAt = at - 3 * 86_400_000;
    await feed(run, [...onboarding(customer), { type: 'InstanceConnected', customerId: customer, at, instanceId, firstConnectedAt: connectedAt } satisfies PolicyEvent].map(fact));
    expect(await guardRow(instanceId)).toMatchObject({ customer_id: customer, first_connected_ms: connectedAt, age_days: 3, restricted_until_ms: null, restriction_signals: 0, updated_ms: at });

    const signalAt = at + 60_000;
    const signal: PolicyEvent = { type: 'RestrictionSignalled', customerId: customer, at: signalAt, instanceId, signal: 'send_error', code: null, until: null, messageId: 'msg_1', recipient: '+14155551001' };
    const out = await feed(run, [fact(signal)]);
    const decoded = await Promise.all(out.map((r) => codec.decode({ topic: r.topic, partition: PARTITION, offset: '0', key: r.key, value: r.value, headers: r.headers ?? {}, timestamp: '0' })));
    const restricted = decoded.find((e) => e?.type === 'PolicyEventEmitted' && e.payload.input_type === 'InstanceRestricted');
    expect(restricted).toBeDefined();
    const until = (JSON.parse(restricted!.type === 'PolicyEventEmitted' ? restricted!.payload.payload : '{}') as { until: number }).until;
    expect(until).toBeGreaterThan(signalAt);

    const told = decoded.filter((e) => e?.type === 'GatewayEventEmitted');
    expect(told).toHaveLength(1);
    const record = told[0]!.type === 'GatewayEventEmitted' ? told[0]!.payload : null;
    expect(record).toMatchObject({ customer_id: customer, instance_id: instanceId, event: 'instance.connection_updated' });
    expect(JSON.parse(record!.payload)).toEqual({
      event: 'instance.connection_updated',
      instance_id: instanceId,
      instance_name: 'front desk',
      timestamp: new Date(signalAt).toISOString(),
      connection_state: 'open',
      restriction: 'restricted',
      restricted_until: new Date(until).toISOString(),
      restriction_signal: 'send_error',
    });
    expect(await guardRow(instanceId)).toMatchObject({ restricted_until_ms: until, restriction_signal: 'send_error', restriction_signals: 1, updated_ms: signalAt });
    const counted = (await metrics.registry.getSingleMetric('gateway_instance_restrictions_total')!.get()).values;
    expect(counted).toEqual([expect.objectContaining({ labels: { signal: 'send_error' }, value: 1 })]);
  });
});
