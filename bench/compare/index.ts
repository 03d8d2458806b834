// Side by side, in one run: this checkout against the commit before a change (before-tree.ts),
// on the same machine, the same infrastructure and, for verify, the same log. Each figure is
// measured in turn for both (alternating rounds, the median kept), so load on the machine weighs
// on both alike. The limits are those of the decider and query-layer rework (issue 15): the send
// path and verify at most 15 % slower, the decider in-process at most twice as slow.
import { execFile } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Topics } from '@gw/events';
import { baseConfig } from '../../test/support/infra.ts';
import { startStack } from '../../test/support/stack.ts';
import { buildPolicyLog } from '../lib/policy-log.ts';
import { defer, deleteKafkaState, deleteSubjects } from '../lib/teardown.ts';
import { runSendPath, type SendPathConfig } from '../send-path.ts';
import { BEFORE_COMMIT, beforeTree } from './before-tree.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const run = promisify(execFile);
export const COMPARE_OUTPUT = `${ROOT}.run/bench/compare.json`;

/** The least now/before ratio of a rate allowed: 15 % slower is 0.85, twice as slow is 0.5. */
export const LIMITS = { sendPath: 0.85, verify: 0.85, decider: 0.5 } as const;

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
const rounds = () => Number(process.env.BENCH_COMPARE_ROUNDS ?? 3);

interface Side {
  before: number;
  now: number;
  /** now / before, for a rate (higher is better). */
  ratio: number;
  runs: { before: number[]; now: number[] };
}

async function alternate(measure: (tree: string) => Promise<number>, before: string): Promise<Side> {
  const runs = { before: [] as number[], now: [] as number[] };
  for (let i = 0; i < rounds(); i++) {
    runs.before.push(await measure(before));
    runs.now.push(await measure(ROOT));
  }
  const side = { before: median(runs.before), now: median(runs.now), runs };
  return { ...side, ratio: side.before > 0 ? side.now / side.before : 0 };
}

async function decider(tree: string): Promise<number> {
  const { stdout } = await run(process.execPath, ['--import', 'tsx', `${ROOT}bench/compare/decider-runner.ts`, tree], { cwd: tree, maxBuffer: 1 << 20 });
  return (JSON.parse(stdout.trim().split('\n').pop()!) as { busy: number }).busy;
}

/** Each checkout's `gatewayctl policy-log verify` over the same log: events per second. */
async function verifyLog(env: Record<string, string>) {
  return async (tree: string): Promise<number> => {
    const { stdout } = await run(`${tree}/services/gatewayctl/bin/gatewayctl.js`, ['--json', 'policy-log', 'verify'], { cwd: tree, env: { ...process.env, ...env }, maxBuffer: 16 << 20 });
    const report = JSON.parse(stdout.trim().split('\n').pop()!) as { ok: boolean; events: number; elapsed_ms: number; events_per_second: number };
    if (!report.ok) throw new Error(`verify of ${tree} found divergences on a clean log`);
    return report.events_per_second;
  };
}

async function verifySide(before: string): Promise<Side & { entries: number }> {
  const entries = Number(process.env.BENCH_COMPARE_LOG_ENTRIES ?? 50_000);
  const stack = await startStack(['policy']);
  const prefix = stack.isolation.topicPrefix;
  defer('compare: the verify log (database, topics, groups, subjects)', async () => {
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
    onProgress: (line) => console.log(`bench: compare: log: ${line}`),
  });
  // Verify is safe beside a running consumer, but an idle one still polls: both measured alone.
  await stack.kill('policy', 'SIGTERM');
  return { ...(await alternate(await verifyLog(stack.env), before)), entries };
}

export interface CompareReport {
  before: string;
  decider: Side;
  verify: (Side & { entries: number }) | null;
  sendPath: Side | null;
}

function print(report: CompareReport): void {
  const row = (name: string, side: Side | null, unit: string, least: number) => {
    if (!side) return `  ${name.padEnd(26)} (not measured)`;
    const verdict = side.ratio >= least ? 'within the limit' : 'OVER the limit';
    return `  ${name.padEnd(26)} before ${String(Math.round(side.before)).padStart(8)} ${unit}   now ${String(Math.round(side.now)).padStart(8)} ${unit}   now/before ${side.ratio.toFixed(2)}  (at least ${least.toFixed(2)}: ${verdict})`;
  };
  console.log(`\n== side by side with ${report.before} (median of ${rounds()} alternating rounds)`);
  console.log(row('decider, in-process', report.decider, 'dec/s', LIMITS.decider));
  console.log(row(`verify, ${report.verify?.entries ?? 0} entries`, report.verify, 'ev/s ', LIMITS.verify));
  console.log(row('send path', report.sendPath, 'sends/s', LIMITS.sendPath));
  for (const [name, side] of [['decider', report.decider], ['verify', report.verify], ['send path', report.sendPath]] as const) {
    if (side) console.log(`  ${name} runs: before ${side.runs.before.map(Math.round).join(', ')}; now ${side.runs.now.map(Math.round).join(', ')}`);
  }
}

/** The side-by-side figures (BENCH_ONLY=compare runs them alone). */
export async function compareBench(config: SendPathConfig): Promise<CompareReport | null> {
  const before = beforeTree();
  if (!before) return null;
  console.log(`\nbench: compare: this checkout against ${BEFORE_COMMIT} (${before})`);
  const report: CompareReport = { before: BEFORE_COMMIT, decider: await alternate(decider, before), verify: null, sendPath: null };
  report.verify = await verifySide(before);
  report.sendPath = await alternate(async (tree) => (await runSendPath(config, tree === ROOT ? undefined : tree)).measured.load.okPerS, before);
  print(report);
  mkdirSync(`${ROOT}.run/bench`, { recursive: true });
  writeFileSync(COMPARE_OUTPUT, `${JSON.stringify(report, null, 2)}\n`);
  return report;
}
