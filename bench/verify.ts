// Issue 29's curve: `gatewayctl policy-log verify --json` over real logs of 100,000 and 200,000
// entries (and 1,000,000 with BENCH_VERIFY_1M=1: it takes minutes to build), each built by the
// real policy consumer (lib/policy-log.ts, 100 customers) in a stack and database of its own, then
// verified by the CLI as an operator runs it, alone (the consumer stopped). For each: seconds,
// events per second and the verify process's peak RSS (/usr/bin/time), so "linear, with flat
// memory" can be read off the rows. BENCH_VERIFY_SIZES="50000 100000" measures other sizes.
// BENCH_ONLY=verify runs this part alone; BENCH_VERIFY_PROFILE=1 also verifies the largest log with
// the heap capped at 256 MB and under --cpu-prof (.run/profiles/verify-<entries>/).
// BENCH_VERIFY_GAP_MS sets the event time between one customer's sends (default 120,000: a busy
// customer's pace, at which even the 100k log spans 33 h per customer, more than the day the rules
// remember, so the decider's state stops growing with the log; 50 is the pace measured before).
import { execFile } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Topics } from '@gw/events';
import { baseConfig } from '../test/support/infra.ts';
import { harnessOf } from './lib/harness.ts';
import { buildPolicyLog } from './lib/policy-log.ts';
import { defer, deleteKafkaState, deleteSubjects } from './lib/teardown.ts';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const run = promisify(execFile);
export const VERIFY_OUTPUT = `${ROOT}.run/bench/verify.json`;

export interface VerifyPoint {
  entries: number;
  sendGapMs: number;
  /** Event time from one customer's first send to its last. */
  spanHours: number;
  events: number;
  seconds: number;
  eventsPerSecond: number;
  peakRssMb: number;
  buildSeconds: number;
}

function sizes(smoke: boolean): number[] {
  const listed = (process.env.BENCH_VERIFY_SIZES ?? '').split(/\s+/).filter(Boolean).map(Number);
  if (listed.length > 0 && listed.every((n) => Number.isInteger(n) && n > 0)) return listed;
  if (smoke) return [300];
  return [100_000, 200_000, ...(process.env.BENCH_VERIFY_1M === '1' ? [1_000_000] : [])];
}

/** The default is a realistic busy customer (one send every 2 min), not a burst (see the top). */
function sendGap(): number {
  const gap = Number(process.env.BENCH_VERIFY_GAP_MS ?? 120_000);
  if (!Number.isFinite(gap) || gap <= 0) throw new Error(`BENCH_VERIFY_GAP_MS must be a positive number of milliseconds, not ${process.env.BENCH_VERIFY_GAP_MS}`);
  return gap;
}

/** A log of `entries` commands decided by this checkout's policy consumer; the environment its CLI needs. */
async function logOf(entries: number, sendGapMs: number): Promise<{ env: Record<string, string>; buildSeconds: number; spanMs: number; release: () => Promise<void> }> {
  const { startStack } = await harnessOf(ROOT);
  const stack = await startStack(['policy']);
  const prefix = stack.isolation.topicPrefix;
  let released = false;
  const release = async () => {
    if (released) return;
    released = true;
    await stack.stop();
    await deleteKafkaState(baseConfig.kafkaBrokers, [prefix]);
    await deleteSubjects(baseConfig.schemaRegistryUrl, prefix);
  };
  defer(`verify: the log of ${entries} entries (database, topics, groups, subjects)`, release);
  const built = await buildPolicyLog({
    brokers: baseConfig.kafkaBrokers,
    registryUrl: baseConfig.schemaRegistryUrl,
    databaseUrl: stack.isolation.databaseUrl,
    topics: new Topics(prefix, baseConfig.topicPartitions),
    entries,
    customers: 100,
    timeoutMs: Math.max(300_000, entries * 3),
    maxBacklog: 2_400,
    sendGapMs,
    onProgress: (line) => console.log(`bench: verify: log of ${entries}: ${line}`),
  });
  const { accepted, rejected, byCode } = built.decided;
  const codes = Object.entries(byCode).sort((a, b) => b[1] - a[1]).map(([code, n]) => `${code} ${n}`).join(', ');
  console.log(`bench: verify: log of ${entries}: ${accepted} accepted, ${rejected} rejected${codes ? ` (${codes})` : ''}`);
  // Verify is safe beside a running consumer, but an idle one still polls: measured alone.
  await stack.kill('policy', 'SIGTERM');
  return { env: stack.env, buildSeconds: built.totalMs / 1000, spanMs: built.spanMs, release };
}

/**
 * `gatewayctl --json policy-log verify` under /usr/bin/time: its report and its peak RSS. `flags`:
 * node flags beside the young generation gatewayctl.js runs with (--cpu-prof, a heap cap).
 */
async function verifyOnce(env: Record<string, string>, flags: string[] = []): Promise<{ report: { ok: boolean; events: number; elapsed_ms: number; events_per_second: number }; peakRssMb: number }> {
  const cli = ['--max-semi-space-size=64', ...flags, `${ROOT}services/gatewayctl/bin/gatewayctl.js`, '--json', 'policy-log', 'verify'];
  const { stdout, stderr } = await run('/usr/bin/time', ['-f', 'peak-rss-kb %M', process.execPath, ...cli], { cwd: ROOT, env: { ...process.env, ...env }, maxBuffer: 64 << 20 });
  const report = JSON.parse(stdout.trim().split('\n').pop()!) as { ok: boolean; events: number; elapsed_ms: number; events_per_second: number };
  const rss = /peak-rss-kb (\d+)/.exec(stderr);
  return { report, peakRssMb: rss ? Number(rss[1]) / 1024 : 0 };
}

export async function verifyBench(options: { smoke?: boolean } = {}): Promise<VerifyPoint[]> {
  const sendGapMs = sendGap();
  console.log(`\n== policy-log verify at scale (issue 29); 100 customers, one send each every ${sendGapMs / 1000} s of event time (BENCH_VERIFY_GAP_MS)`);
  const points: VerifyPoint[] = [];
  for (const entries of sizes(options.smoke ?? false)) {
    const log = await logOf(entries, sendGapMs);
    const { report, peakRssMb } = await verifyOnce(log.env);
    if (!report.ok) throw new Error(`verify found divergences on a clean log of ${entries} entries`);
    const spanHours = Math.round(log.spanMs / 36_000) / 100;
    const span = log.spanMs < 3_600_000 ? `${Math.round(log.spanMs / 1000)} s` : `${(log.spanMs / 3_600_000).toFixed(1)} h`;
    const point = { entries, sendGapMs, spanHours, events: report.events, seconds: report.elapsed_ms / 1000, eventsPerSecond: report.events_per_second, peakRssMb: Math.round(peakRssMb), buildSeconds: Math.round(log.buildSeconds) };
    points.push(point);
    console.log(
      `verify: ${String(entries).padStart(9)} entries  ${span.padStart(8)} of event time per customer  ${String(point.events).padStart(9)} events  ${point.seconds.toFixed(1).padStart(7)} s  ${String(point.eventsPerSecond).padStart(7)} events/s  peak RSS ${String(point.peakRssMb).padStart(5)} MB  (log built in ${point.buildSeconds} s)`,
    );
    if (process.env.BENCH_VERIFY_PROFILE === '1' && entries === Math.max(...sizes(options.smoke ?? false))) {
      // The largest log once more with the heap capped (memory flat in the log's size: it must
      // still verify), and once under --cpu-prof (one profile per thread, to read where the time goes).
      const capped = await verifyOnce(log.env, ['--max-old-space-size=256']);
      console.log(`verify: with the old generation capped at 256 MB: ${capped.report.ok ? 'ok' : 'DIVERGENCES'} in ${(capped.report.elapsed_ms / 1000).toFixed(1)} s, peak RSS ${Math.round(capped.peakRssMb)} MB`);
      const dir = `${ROOT}.run/profiles/verify-${entries}`;
      await verifyOnce(log.env, ['--cpu-prof', `--cpu-prof-dir=${dir}`]);
      console.log(`verify: CPU profiles of the ${entries}-entry verify in ${dir}`);
    }
    await log.release();
  }
  mkdirSync(`${ROOT}.run/bench`, { recursive: true });
  writeFileSync(VERIFY_OUTPUT, `${JSON.stringify(points, null, 2)}\n`);
  return points;
}
