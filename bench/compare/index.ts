// Side by side, in one run: this checkout against the commit before a change (before-tree.ts),
// on the same machine and the same infrastructure. Each side runs its own code end to end: its own
// stack and migrations in a database of its own (bench/lib/harness.ts), its own verify over a log
// its own policy consumer decided from the same commands. Each figure is measured in turn for both
// (alternating rounds, the median kept), so load on the machine weighs on both alike. The limits
// are issue 26's: the send path and verify within 10 % of before; the decider at most twice as slow.
import { execFile } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Topics } from '@gw/events';
import { baseConfig } from '../../test/support/infra.ts';
import { harnessOf } from '../lib/harness.ts';
import { buildPolicyLog } from '../lib/policy-log.ts';
import { defer, deleteKafkaState, deleteSubjects } from '../lib/teardown.ts';
import { runSendPath, type SendPathConfig } from '../send-path.ts';
import { BEFORE_REVISION, beforeTree } from './before-tree.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const run = promisify(execFile);
export const COMPARE_OUTPUT = `${ROOT}.run/bench/compare.json`;

/** The least now/before ratio of a rate allowed: 10 % slower is 0.9, twice as slow is 0.5. */
export const LIMITS = { sendPath: 0.9, verify: 0.9, decider: 0.5 } as const;

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
const rounds = () => Number(process.env.BENCH_COMPARE_ROUNDS ?? 3);

interface Side {
  before: number;
  now: number;
  /** now / before, for a rate (higher is better). */
  ratio: number;
  runs: { before: number[]; now: number[] };
}

type Tree = 'before' | 'now';
/** The before tree is null in the smoke: this checkout runs alone. */
type Trees = { before: string | null; now: string };

/** Both trees in turn, `rounds()` times; this checkout alone when `trees` has no before (the smoke). */
async function alternate(trees: Trees, measure: (side: Tree) => Promise<number>): Promise<Side> {
  const runs = { before: [] as number[], now: [] as number[] };
  for (let i = 0; i < rounds(); i++) {
    if (trees.before) runs.before.push(await measure('before'));
    runs.now.push(await measure('now'));
  }
  const now = median(runs.now);
  const side = { before: trees.before ? median(runs.before) : now, now, runs };
  return { ...side, ratio: side.before > 0 ? side.now / side.before : 0 };
}

async function decider(tree: string): Promise<number> {
  const { stdout } = await run(process.execPath, ['--import', 'tsx', `${ROOT}bench/compare/decider-runner.ts`, tree], { cwd: tree, maxBuffer: 1 << 20 });
  return (JSON.parse(stdout.trim().split('\n').pop()!) as { busy: number }).busy;
}

/** A tree's `gatewayctl policy-log verify` over its own log: events per second. */
async function verifyLog(tree: string, env: Record<string, string>): Promise<number> {
  const { stdout } = await run(`${tree}/services/gatewayctl/bin/gatewayctl.js`, ['--json', 'policy-log', 'verify'], { cwd: tree, env: { ...process.env, ...env }, maxBuffer: 16 << 20 });
  const report = JSON.parse(stdout.trim().split('\n').pop()!) as { ok: boolean; events: number; elapsed_ms: number; events_per_second: number };
  if (!report.ok) throw new Error(`verify of ${tree} found divergences on a clean log`);
  return report.events_per_second;
}

/** A policy log of `entries` commands decided by `tree`'s own policy consumer in its own database; the environment its CLI needs. */
async function logOf(tree: string, entries: number): Promise<Record<string, string>> {
  const { startStack } = await harnessOf(tree);
  const stack = await startStack(['policy']);
  const prefix = stack.isolation.topicPrefix;
  defer(`compare: the verify log of ${tree} (database, topics, groups, subjects)`, async () => {
    await stack.stop();
    await deleteKafkaState(baseConfig.kafkaBrokers, [prefix]);
    await deleteSubjects(baseConfig.schemaRegistryUrl, prefix);
  });
  await buildPolicyLog({
    brokers: baseConfig.kafkaBrokers,
    registryUrl: baseConfig.schemaRegistryUrl,
    databaseUrl: stack.isolation.databaseUrl,
    topics: new Topics(prefix, baseConfig.topicPartitions),
    entries,
    customers: 100,
    timeoutMs: 300_000,
    maxBacklog: 2_400,
    onProgress: (line) => console.log(`bench: compare: log of ${tree === ROOT ? 'now' : 'before'}: ${line}`),
  });
  // Verify is safe beside a running consumer, but an idle one still polls: both measured alone.
  await stack.kill('policy', 'SIGTERM');
  return stack.env;
}

async function verifySide(trees: Trees): Promise<Side & { entries: number }> {
  const entries = Number(process.env.BENCH_COMPARE_LOG_ENTRIES ?? 50_000);
  const env = { before: trees.before ? await logOf(trees.before, entries) : {}, now: await logOf(trees.now, entries) };
  return { ...(await alternate(trees, (side) => verifyLog(trees[side]!, env[side]))), entries };
}

export interface CompareReport {
  before: string;
  decider: Side;
  verify: (Side & { entries: number }) | null;
  sendPath: Side | null;
  /** The send path's p99 latency (ms) of each run, beside its rate. */
  sendPathP99Ms: { before: number[]; now: number[] };
}

function print(report: CompareReport): void {
  const row = (name: string, side: Side | null, unit: string, least: number) => {
    if (!side) return `  ${name.padEnd(26)} (not measured)`;
    const verdict = side.ratio >= least ? 'within the limit' : 'OVER the limit';
    return `  ${name.padEnd(26)} before ${String(Math.round(side.before)).padStart(8)} ${unit}   now ${String(Math.round(side.now)).padStart(8)} ${unit}   now/before ${side.ratio.toFixed(2)}  (at least ${least.toFixed(2)}: ${verdict})`;
  };
  console.log(`\n== side by side with ${report.before} (median of ${rounds()} alternating rounds; each side its own stack, migrations and database)`);
  console.log(row('decider, in-process', report.decider, 'dec/s', LIMITS.decider));
  console.log(row(`verify, ${report.verify?.entries ?? 0} entries`, report.verify, 'ev/s ', LIMITS.verify));
  console.log(row('send path', report.sendPath, 'sends/s', LIMITS.sendPath));
  const p99 = report.sendPathP99Ms;
  if (p99.now.length > 0) console.log(`  send path p99 (ms)         before ${String(median(p99.before)).padStart(8)}           now ${String(median(p99.now)).padStart(8)}`);
  for (const [name, side] of [['decider', report.decider], ['verify', report.verify], ['send path', report.sendPath]] as const) {
    if (side) console.log(`  ${name} runs: before ${side.runs.before.map(Math.round).join(', ')}; now ${side.runs.now.map(Math.round).join(', ')}`);
  }
}

/**
 * The side-by-side figures (BENCH_ONLY=compare runs them alone). `smoke`: this checkout alone,
 * the decider and verify only (no other commit extracted and started, and the send path is smoked
 * by its own part), which keeps the smoke within `make test`'s time.
 */
export async function compareBench(config: SendPathConfig, options: { smoke?: boolean } = {}): Promise<CompareReport | null> {
  const extracted = options.smoke ? { commit: 'nothing (smoke: this checkout alone)', dir: null } : beforeTree();
  if (!extracted) return null;
  const trees: Trees = { before: extracted.dir, now: ROOT };
  console.log(`\nbench: compare: this checkout against ${extracted.commit} (BENCH_BEFORE=${BEFORE_REVISION}${extracted.dir ? `; ${extracted.dir}` : ''})`);
  const sendPathP99Ms = { before: [] as number[], now: [] as number[] };
  const report: CompareReport = { before: extracted.commit, decider: await alternate(trees, (side) => decider(trees[side]!)), verify: null, sendPath: null, sendPathP99Ms };
  report.verify = await verifySide(trees);
  if (!options.smoke) {
    report.sendPath = await alternate(trees, async (side) => {
      const { load } = (await runSendPath(config, side === 'now' ? undefined : trees.before!)).measured;
      sendPathP99Ms[side].push(load.latencyMs.p99);
      return load.okPerS;
    });
  }
  print(report);
  mkdirSync(`${ROOT}.run/bench`, { recursive: true });
  writeFileSync(COMPARE_OUTPUT, `${JSON.stringify(report, null, 2)}\n`);
  return report;
}
