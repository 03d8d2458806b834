// The compliance-replay benchmark: `gatewayctl policy-log verify` (Postgres chain, decisions-topic
// chain and agreement, re-run of the decider over customer-events) over a real log of
// BENCH_LOG_ENTRIES (200,000) entries decided by the real policy consumer, against the raw rate
// at which the same topics can be read, measured in the same run. Reports; never gates.
import { mkdirSync, writeFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { createPool } from '@gw/db';
import { EventCodec, Topics } from '@gw/events';
import { KafkaInspector, type ConsumedRecord } from '@gw/kafka';
import { prepareReplay, toScopeRanges, verifyPolicyLog, type ComplianceDeps, type ReplayScope, type VerifyReport } from '../services/gatewayctl/src/compliance/index.ts';
import { measureReplaySteps, type StepCosts } from './lib/replay-steps.ts';
import { benchDecider } from '../libs/policy/src/bench.ts';
import { baseConfig } from '../test/support/infra.ts';
import { startStack } from '../test/support/stack.ts';
import { buildPolicyLog, type BuiltLog } from './lib/replay-log.ts';
import { BENCH_PROCESS, cpuSnapshot, cpuUsage, type CpuUsage } from './lib/cpu.ts';
import { defer, deleteKafkaState, deleteSubjects } from './lib/teardown.ts';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
export const REPLAY_OUTPUT = `${ROOT}.run/bench/replay.json`;

/** Replay (verify) at least half the raw consume rate of the same records. */
export const REPLAY_TARGET = { ratioToRaw: 0.5 } as const;

export interface ReplayConfig {
  entries: number;
  customers: number;
  /** Longest wait for the policy consumer to decide the whole log. */
  buildTimeoutS: number;
  /** Commands appended ahead of the policy consumer (see LogSpec.maxBacklog). */
  maxBacklog: number;
}

function intEnv(name: string, fallback: number, min = 1): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) throw new Error(`${name} must be an integer >= ${min}, got "${raw}"`);
  return value;
}

export function replayConfigFromEnv(): ReplayConfig {
  return {
    entries: intEnv('BENCH_LOG_ENTRIES', 200_000),
    customers: intEnv('BENCH_LOG_CUSTOMERS', 200),
    buildTimeoutS: intEnv('BENCH_LOG_BUILD_TIMEOUT_S', 300),
    maxBacklog: intEnv('BENCH_LOG_BACKLOG', 2400, 60),
  };
}

const round = (value: number, digits = 0) => Math.round(value * 10 ** digits) / 10 ** digits;
const perS = (n: number, ms: number) => (ms > 0 ? Math.round((n / ms) * 1000) : 0);

interface Timed {
  records: number;
  ms: number;
  perS: number;
  cpu: CpuUsage;
}

async function timed(work: () => Promise<number>): Promise<Timed> {
  const before = cpuSnapshot();
  const started = performance.now();
  const records = await work();
  const ms = performance.now() - started;
  return { records, ms: round(ms), perS: perS(records, ms), cpu: cpuUsage(before, cpuSnapshot()) };
}

/** Reads a topic to its end with the compliance tooling's reader, as verify does, doing only `each` per record. */
async function readAll(inspector: KafkaInspector, topic: string, each?: (record: ConsumedRecord) => Promise<unknown>): Promise<number> {
  const ends = await inspector.endOffsets(topic);
  let n = 0;
  await inspector.readToEnd(topic, {
    ends,
    concurrency: ends.size,
    onBatch: async (records) => {
      if (each) for (const record of records) await each(record);
      n += records.length;
    },
  });
  return n;
}

/**
 * The replay pass of verify (read here, decode and decide on the worker threads) stopped short:
 * after decoding each record, or after deciding it without digesting the decision. What the
 * replay cannot do beyond these is the cost of the step cut off.
 */
async function replayFloor(deps: ComplianceDeps, topic: string, stopAfter: NonNullable<ReplayScope['stopAfter']>): Promise<Timed> {
  const ends = await deps.kafka.endOffsets(topic);
  const runner = prepareReplay(deps);
  const scope: ReplayScope = { topic, ends: toScopeRanges(ends), committed: [...ends.keys()].map((partition) => [partition, null]), customers: null, stopAfter };
  try {
    const before = cpuSnapshot();
    const outcome = await runner.run(scope, () => undefined);
    const cpu = cpuUsage(before, cpuSnapshot());
    return { records: outcome.customerEvents, ms: outcome.elapsedMs, perS: perS(outcome.customerEvents, outcome.elapsedMs), cpu };
  } finally {
    await runner.stop();
  }
}

export interface ReplayReport {
  at: string;
  config: ReplayConfig;
  cores: number;
  target: typeof REPLAY_TARGET;
  build: BuiltLog;
  raw: {
    customerEvents: Timed;
    decisions: Timed;
    customerEventsDecoded: Timed;
    decisionsDecoded: Timed;
    /** Both topics, count only: the rate the verify is compared with. */
    both: { records: number; ms: number; perS: number };
    bothDecoded: { records: number; ms: number; perS: number };
  };
  /** The replay pass cut short (replayFloor): decode only; decode and decide, no comparison. */
  floors: { decodeOnly: Timed; decideNoCompare: Timed };
  /** The replay's steps on one thread (measureReplaySteps), and the CPU per record the target leaves them. */
  steps: StepCosts & { readUs: number; budgetUs: number; budgetBesideReadUs: number };
  verify: {
    report: Omit<VerifyReport, 'divergences'> & { divergences: VerifyReport['divergences'] };
    cpu: CpuUsage;
    /** Kafka records (decisions + customer events) verified per second over the whole verify. */
    kafkaRecordsPerS: number;
    /** Phase (3) alone: customer events replayed through the engine per second. */
    replayPerS: number | null;
  };
  ratio: {
    /** Verify's Kafka records/s over the raw (count-only) rate of both topics. */
    verifyToRaw: number | null;
    /** Verify's own events/s figure (Postgres rows + records) over the raw rate. */
    verifyEventsToRaw: number | null;
    /** Replay phase's customer events/s over the raw rate of customer-events. */
    replayToRaw: number | null;
    verifyToDecoded: number | null;
    replayToDecoded: number | null;
    decodeOnlyToRaw: number | null;
    decideNoCompareToRaw: number | null;
  };
  verdict: { verify: 'PASS' | 'MISS'; replay: 'PASS' | 'MISS' | null };
  decider: { decisionsPerS: number; sparseDecisionsPerS: number; commands: number };
  limits: string[];
}

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  const line = (r: string[]) => r.map((cell, i) => (i > 0 ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!))).join('  ');
  return [line(rows[0]!), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.slice(1).map(line)].join('\n');
}

const ratio = (a: number, b: number) => (b > 0 ? round(a / b, 2) : null);
const fmt = (v: number | null | undefined, digits = 0) => (v === null || v === undefined ? '-' : round(v, digits).toString());
// cpu.ts names this process after the send-path bench's roles; here it is the reader and verifier.
const cpuTop = (cpu: CpuUsage) => Object.entries(cpu.byComponent).slice(0, 3).map(([k, v]) => `${k === BENCH_PROCESS ? 'bench process (reader / verify)' : k} ${v}%`).join(', ');

function print(r: ReplayReport): void {
  const b = r.build;
  const v = r.verify.report;
  console.log('');
  console.log(`== compliance replay: policy-log verify over ${v.counts.db_rows} entries vs raw consume of the same topics`);
  console.log(
    `setup (not a figure): ${b.commands} commands for ${b.customers} customers + ${b.facts} facts appended in ${fmt(b.produceMs / 1000, 1)} s, ` +
      `decided by the policy consumer in ${fmt(b.decideMs / 1000, 1)} s (${perS(b.commands, b.decideMs)}/s); build ${fmt(b.totalMs / 1000, 1)} s in all. ` +
      `Decisions: ${b.decided.accepted} accepted, ${b.decided.rejected} rejected ${JSON.stringify(b.decided.byCode)}`,
  );
  const row = (label: string, t: { records: number; ms: number; perS: number }) => [label, String(t.records), fmt(t.ms / 1000, 2), String(t.perS)];
  console.log(
    table([
      ['', 'records', 's', 'records/s'],
      row('raw: customer-events, count only', r.raw.customerEvents),
      row('raw: policy-decisions, count only', r.raw.decisions),
      row('raw: both topics, count only', r.raw.both),
      row('raw + decode: customer-events', r.raw.customerEventsDecoded),
      row('raw + decode: policy-decisions', r.raw.decisionsDecoded),
      row('raw + decode: both topics', r.raw.bothDecoded),
      ['verify: all three checks, Kafka records', String(v.counts.kafka_decisions + v.counts.customer_events), fmt(v.elapsed_ms / 1000, 2), String(r.verify.kafkaRecordsPerS)],
      ['verify: all three checks, events (+ Postgres rows)', String(v.events), fmt(v.elapsed_ms / 1000, 2), String(v.events_per_second)],
      ...(v.phases_ms
        ? [
            ['  (3) replay of customer-events (first, alone: read here, decided in worker threads)', String(v.counts.customer_events), fmt(v.phases_ms.replay / 1000, 2), String(r.verify.replayPerS ?? '-')],
            row('      floor: the same pass, decode only', r.floors.decodeOnly),
            row('      floor: the same pass, decode + decide, no comparison', r.floors.decideNoCompare),
            ['      before it: waiting for the worker threads to load (started with verify)', '', fmt((v.phases_ms.replay_start ?? 0) / 1000, 2), ''],
            ['  (1) Postgres chain (after 3, alongside 2)', String(v.counts.db_rows), fmt(v.phases_ms.postgres / 1000, 2), String(perS(v.counts.db_rows, v.phases_ms.postgres))],
            ['  (2) decisions topic (after 3, alongside 1)', String(v.counts.kafka_decisions), fmt(v.phases_ms.decisions / 1000, 2), String(perS(v.counts.kafka_decisions, v.phases_ms.decisions))],
          ]
        : []),
    ]),
  );
  console.log(
    `verify result: ${v.ok ? 'CLEAN' : `${v.divergence_count} DIVERGENCE(S)`}; ${v.counts.decisions_replayed} decisions re-run, ${v.counts.pending_commands} pending, ${v.counts.kafka_duplicates} duplicates` +
      (v.divergences.length ? `; e.g. ${JSON.stringify(v.divergences.slice(0, 3))}` : ''),
  );
  console.log(`CPU during raw count (% of one core): ${cpuTop(r.raw.customerEvents.cpu)}; during verify: ${cpuTop(r.verify.cpu)}; machine ${r.verify.cpu.machineBusyPct}% busy of ${r.cores} cores`);
  console.log(`decider (in-process, no I/O): ${r.decider.decisionsPerS} decisions/s at one send every 2 s; ${r.decider.sparseDecisionsPerS} decisions/s at one every 30 s (${r.decider.commands} commands)`);
  for (const note of r.limits) console.log(`- ${note}`);
  console.log('');
  console.log(
    `replay: verify ${r.verify.kafkaRecordsPerS} Kafka records/s (${v.events_per_second} events/s incl. Postgres rows) vs raw ${r.raw.both.perS} records/s: ratio ${fmt(r.ratio.verifyToRaw, 2)} ` +
      `(events/s ratio ${fmt(r.ratio.verifyEventsToRaw, 2)}); replay phase ${fmt(r.verify.replayPerS)} events/s vs raw customer-events ${r.raw.customerEvents.perS}/s: ratio ${fmt(r.ratio.replayToRaw, 2)}`,
  );
  console.log(
    `replay floors vs raw customer-events: decode only ${r.floors.decodeOnly.perS}/s (${fmt(r.ratio.decodeOnlyToRaw, 2)}); decode + decide, no comparison ${r.floors.decideNoCompare.perS}/s (${fmt(r.ratio.decideNoCompareToRaw, 2)})`,
  );
  console.log(
    `target verify >= ${REPLAY_TARGET.ratioToRaw} x raw: ${r.verdict.verify} (${fmt(r.ratio.verifyToRaw, 2)}); replay phase >= ${REPLAY_TARGET.ratioToRaw} x raw: ${r.verdict.replay ?? '-'} (${fmt(r.ratio.replayToRaw, 2)}); ` +
      `decider ${r.decider.decisionsPerS} decisions/s in-process`,
  );
  console.log(`figures written to ${REPLAY_OUTPUT}`);
}

function whatLimits(r: ReplayReport): string[] {
  const notes: string[] = [];
  const v = r.verify.report;
  if (v.phases_ms) {
    const total = v.elapsed_ms || 1;
    const share = (ms: number) => `${Math.round((ms / total) * 100)}%`;
    notes.push(
      `verify wall time: worker threads loading ${share(v.phases_ms.replay_start ?? 0)}, replay ${share(v.phases_ms.replay)} (alone), then Postgres and Kafka side by side ${share(Math.max(v.phases_ms.postgres, v.phases_ms.decisions))} ` +
        `(Postgres ${share(v.phases_ms.postgres)}, Kafka ${share(v.phases_ms.decisions)}), the rest ${share(v.phases_ms.other)}.`,
    );
    // What the decider alone costs in the replay, at the in-process rate.
    const decideShare = (v.counts.decisions_replayed / Math.max(r.decider.decisionsPerS, 1)) * 1000;
    const rawMs = r.raw.both.ms;
    notes.push(
      `bound: at 0.5 x raw, verify would have ${fmt((2 * rawMs) / 1000, 2)} s for these records; re-running ${v.counts.decisions_replayed} decisions alone takes ~${fmt(decideShare / 1000, 2)} s ` +
        `at the in-process decider rate (busy-customer case), before any decoding, hashing or Postgres reading. Raw consume does none of that work.`,
    );
  }
  const st = r.steps;
  notes.push(
    `CPU budget at ${REPLAY_TARGET.ratioToRaw} x raw on ${r.cores} cores: ${st.budgetUs} us per record for everything; the read (as raw reads) takes ${st.readUs}, ` +
      `leaving ${st.budgetBesideReadUs} us. The replay's steps on one thread (${st.records} records): decode ${st.decodeUs} + decide ${st.decideUs} + comparison ${st.compareUs} = ${st.totalUs} us per record.`,
  );
  if (r.ratio.decideNoCompareToRaw !== null && r.ratio.decideNoCompareToRaw < REPLAY_TARGET.ratioToRaw) {
    notes.push(
      `the decider alone misses the target: the replay pass with no comparison at all reaches ${fmt(r.ratio.decideNoCompareToRaw, 2)} x raw on ${r.cores} cores ` +
        `(decode only: ${fmt(r.ratio.decodeOnlyToRaw, 2)}), so no cheaper comparison can bring the replay to ${REPLAY_TARGET.ratioToRaw}.`,
    );
  }
  const benchCpu = r.verify.cpu.byComponent[BENCH_PROCESS] ?? 0;
  notes.push(
    `verify runs in one Node process: ${benchCpu}% of one core during verify (${benchCpu >= 85 ? 'CPU-bound on the main thread' : 'not CPU-bound: waiting on Kafka/Postgres'}); ` +
      `raw count used ${r.raw.customerEvents.cpu.byComponent[BENCH_PROCESS] ?? 0}% (kafkajs fetch + record decoding).`,
  );
  notes.push(
    `decode alone costs: raw ${r.raw.both.perS}/s -> raw + Avro decode ${r.raw.bothDecoded.perS}/s (verify / decoded: ${fmt(r.ratio.verifyToDecoded, 2)}; replay / decoded customer-events: ${fmt(r.ratio.replayToDecoded, 2)}).`,
  );
  return notes;
}

/** Runs the bench; BENCH_ONLY=baseline|send skip it (they select one side of the send-path bench). */
export async function replayBench(config: ReplayConfig = replayConfigFromEnv()): Promise<ReplayReport | null> {
  const only = process.env.BENCH_ONLY;
  if (only && only !== 'replay') return null;
  console.log(`\nbench: compliance replay over ${config.entries} policy-log entries (${config.customers} customers); building the log through the real policy consumer`);

  // The in-process decider rate, for the summary (what the replay's decide step can reach at best).
  benchDecider(2_000);
  const deciderCommands = Number(process.env.BENCH_DECISIONS ?? 20_000);
  const decider = { decisionsPerS: benchDecider(deciderCommands), sparseDecisionsPerS: benchDecider(deciderCommands, 30_000), commands: deciderCommands };

  const stack = await startStack(['policy']);
  const prefix = stack.isolation.topicPrefix;
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await stack.stop();
    const removed = await deleteKafkaState(baseConfig.kafkaBrokers, [prefix]);
    const subjects = await deleteSubjects(baseConfig.schemaRegistryUrl, prefix);
    console.log(`bench: replay: removed the log's database, ${removed.topics} topics, ${removed.groups} consumer groups and ${subjects} registry subjects`);
  };
  defer('replay bench: policy service, its database, topics, groups and subjects', stop);
  const topics = new Topics(prefix, Number(stack.env.TOPIC_PARTITIONS ?? baseConfig.topicPartitions));
  const pool = createPool(stack.isolation.databaseUrl, 3);
  try {
    const build = await buildPolicyLog({
      brokers: baseConfig.kafkaBrokers,
      registryUrl: baseConfig.schemaRegistryUrl,
      databaseUrl: stack.isolation.databaseUrl,
      topics,
      entries: config.entries,
      customers: config.customers,
      timeoutMs: config.buildTimeoutS * 1000,
      maxBacklog: config.maxBacklog,
      onProgress: (line) => console.log(`bench: replay: ${line}`),
    });
    console.log(`bench: replay: log built in ${round(build.totalMs / 1000, 1)} s (setup); stopping the policy consumer so it does not share the CPU`);
    // Verify is safe beside a running consumer, but an idle one still polls; measured alone.
    await stack.kill('policy', 'SIGTERM');

    const inspector = new KafkaInspector(baseConfig.kafkaBrokers, prefix);
    const customerTopic = topics.name('customerEvents');
    const decisionsTopic = topics.name('policyDecisions');
    // Warm-up read: page cache, broker segment handles and the JIT, for both sides alike.
    await readAll(inspector, decisionsTopic);

    console.log('bench: replay: measuring raw consume (count only, then with Avro decode)');
    const customerEvents = await timed(() => readAll(inspector, customerTopic));
    const decisions = await timed(() => readAll(inspector, decisionsTopic));
    const rawCodec = new EventCodec(baseConfig.schemaRegistryUrl, topics);
    const customerEventsDecoded = await timed(() => readAll(inspector, customerTopic, (record) => rawCodec.decode(record)));
    const decisionsDecoded = await timed(() => readAll(inspector, decisionsTopic, (record) => rawCodec.decode(record)));
    const both = { records: customerEvents.records + decisions.records, ms: round(customerEvents.ms + decisions.ms), perS: 0 };
    both.perS = perS(both.records, both.ms);
    const bothDecoded = { records: customerEventsDecoded.records + decisionsDecoded.records, ms: round(customerEventsDecoded.ms + decisionsDecoded.ms), perS: 0 };
    bothDecoded.perS = perS(bothDecoded.records, bothDecoded.ms);

    const connection = { kafkaBrokers: baseConfig.kafkaBrokers, groupPrefix: prefix, schemaRegistryUrl: baseConfig.schemaRegistryUrl };
    console.log('bench: replay: measuring the replay pass cut short (decode only; decode + decide without comparing)');
    const floorDeps = { pool, kafka: inspector, codec: new EventCodec(baseConfig.schemaRegistryUrl, topics), topics, connection };
    const floors = { decodeOnly: await replayFloor(floorDeps, customerTopic, 'decode'), decideNoCompare: await replayFloor(floorDeps, customerTopic, 'decide') };
    console.log('bench: replay: measuring the replay steps on one thread');
    const costs = await measureReplaySteps(inspector, customerTopic, baseConfig.schemaRegistryUrl);
    // The raw read's CPU per record (this process: the reader and its helper threads).
    const readerPct = customerEvents.cpu.byComponent[BENCH_PROCESS] ?? 0;
    const readUs = round(((readerPct / 100) * customerEvents.ms * 1000) / Math.max(customerEvents.records, 1), 1);
    const budgetUs = round((cpuSnapshot().cores * 1e6) / Math.max(REPLAY_TARGET.ratioToRaw * customerEvents.perS, 1), 1);
    const steps = { ...costs, readUs, budgetUs, budgetBesideReadUs: round(budgetUs - readUs, 1) };

    console.log('bench: replay: measuring policy-log verify (Postgres chain, decisions topic, replay of customer-events)');
    // A fresh codec, as a gatewayctl process starts with: schema lookups are part of the cost.
    const deps = { pool, kafka: inspector, codec: new EventCodec(baseConfig.schemaRegistryUrl, topics), topics, connection };
    const before = cpuSnapshot();
    const report = await verifyPolicyLog(deps, { maxDivergences: 20 });
    const verifyCpu = cpuUsage(before, cpuSnapshot());
    const kafkaRecords = report.events - report.counts.db_rows;
    const kafkaRecordsPerS = perS(kafkaRecords, report.elapsed_ms);
    const replayPerS = report.phases_ms ? perS(report.counts.customer_events, report.phases_ms.replay) : null;

    const result: ReplayReport = {
      at: new Date().toISOString(),
      config,
      cores: cpuSnapshot().cores,
      target: REPLAY_TARGET,
      build,
      raw: { customerEvents, decisions, customerEventsDecoded, decisionsDecoded, both, bothDecoded },
      floors,
      steps,
      verify: { report, cpu: verifyCpu, kafkaRecordsPerS, replayPerS },
      ratio: {
        verifyToRaw: ratio(kafkaRecordsPerS, both.perS),
        verifyEventsToRaw: ratio(report.events_per_second, both.perS),
        replayToRaw: replayPerS === null ? null : ratio(replayPerS, customerEvents.perS),
        verifyToDecoded: ratio(kafkaRecordsPerS, bothDecoded.perS),
        replayToDecoded: replayPerS === null ? null : ratio(replayPerS, customerEventsDecoded.perS),
        decodeOnlyToRaw: ratio(floors.decodeOnly.perS, customerEvents.perS),
        decideNoCompareToRaw: ratio(floors.decideNoCompare.perS, customerEvents.perS),
      },
      verdict: {
        verify: kafkaRecordsPerS >= REPLAY_TARGET.ratioToRaw * both.perS ? 'PASS' : 'MISS',
        replay: replayPerS === null ? null : replayPerS >= REPLAY_TARGET.ratioToRaw * customerEvents.perS ? 'PASS' : 'MISS',
      },
      decider,
      limits: [],
    };
    result.limits = whatLimits(result);
    mkdirSync(`${ROOT}.run/bench`, { recursive: true });
    writeFileSync(REPLAY_OUTPUT, `${JSON.stringify(result, null, 2)}\n`);
    print(result);
    return result;
  } finally {
    await pool.end().catch(() => undefined);
    console.log('bench: replay: cleaning up');
    await stop();
  }
}
