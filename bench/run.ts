// `make bench` entry point (scripts/bench.sh): runs the benchmarks, prints their figures and
// writes them under .run/bench/. Benchmarks report; they do not gate: the exit code is 0 unless
// the bench itself could not run (infrastructure missing, stack failed to start, time budget) or
// measured the wrong thing (the send path's sends refused: bench/send-path.ts assertAccepted).
import { readdirSync, readFileSync } from 'node:fs';
import { PreflightError, preflight } from './lib/preflight.ts';
import { defer, teardown } from './lib/teardown.ts';
import { sendPathBench, type SendPathConfig } from './send-path.ts';
import { deciderBench } from './decider.ts';
import { pbxBench } from './pbx.ts';
import { compareBench } from './compare/index.ts';
import { webhooksBench } from './webhooks.ts';
import { verifyBench } from './verify.ts';
import { policyStateBench } from './policy-state.ts';

function intEnv(name: string, fallback: number, min = 1): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) {
    console.error(`bench: ${name} must be an integer >= ${min}, got "${raw}"`);
    process.exit(2);
  }
  return value;
}

/** "A=1 B=2" -> { A: '1', B: '2' } */
function envList(raw: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of (raw ?? '').split(/\s+/).filter(Boolean)) {
    const at = pair.indexOf('=');
    if (at > 0) out[pair.slice(0, at)] = pair.slice(at + 1);
  }
  return out;
}

/**
 * BENCH_SMOKE=1 (`make bench-smoke`, run by `make test`): every part for a few seconds with tiny
 * sizes, so a bench that no longer runs is caught the day it breaks. Figures from it mean nothing.
 * Its compare part puts this checkout on both sides (no other commit extracted and started), which
 * keeps it within `make test`'s time; BENCH_ONLY=compare with the defaults runs the real one.
 */
const SMOKE = process.env.BENCH_SMOKE === '1';
if (SMOKE) {
  const sizes: Record<string, string> = {
    BENCH_CUSTOMERS: '2',
    BENCH_DECISIONS: '2000',
    BENCH_COMPARE_ROUNDS: '1',
    BENCH_COMPARE_LOG_ENTRIES: '300',
    BENCH_WEBHOOK_EVENTS: '100',
    BENCH_CONTACTS_PER_INSTANCE: '20',
    BENCH_PBX_CUSTOMERS: '2',
  };
  for (const [name, value] of Object.entries(sizes)) process.env[name] ??= value;
}

const config: SendPathConfig = {
  warmupS: intEnv('BENCH_WARMUP_S', SMOKE ? 1 : 5),
  durationS: intEnv('BENCH_DURATION_S', SMOKE ? 2 : 20),
  connections: intEnv('BENCH_CONNECTIONS', SMOKE ? 4 : 32),
  timeoutS: intEnv('BENCH_REQUEST_TIMEOUT_S', 20),
  stackEnv: envList(process.env.BENCH_STACK_ENV),
  smoke: SMOKE,
  ...(['baseline', 'floor', 'send', 'send-path', 'compare', 'pbx', 'webhooks'].includes(process.env.BENCH_ONLY ?? '') ? { only: process.env.BENCH_ONLY as NonNullable<SendPathConfig['only']> } : {}),
};
// The send path, floor and PBX runs, the side-by-side rounds (six send-path runs with their
// stacks, a 50,000-entry log and six verifies) and the webhooks run.
// Each compare side builds its own log; the smoke's whole run is a couple of minutes.
const budgetS = intEnv('BENCH_TIMEOUT_S', SMOKE ? 420 : Math.max(1800, 9 * (config.warmupS + config.durationS + 40) + 1200));

/** Children of this process still alive (e.g. service processes a failed startStack could not hand back). */
function children(): number[] {
  const out: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      // tsx's own esbuild helper is a child too; it ends with this process.
      if (ppid === process.pid && comm !== 'esbuild') out.push(Number(entry));
    } catch {
      // gone
    }
  }
  return out;
}

async function reapChildren(): Promise<void> {
  const alive = children();
  if (alive.length === 0) return;
  console.error(`bench: stopping leftover child processes ${alive.join(', ')}`);
  for (const pid of alive) {
    try {
      process.kill(pid, 'SIGTERM');
    } catch {
      // already gone
    }
  }
  const deadline = Date.now() + 10_000;
  while (children().length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
  for (const pid of children()) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}

let exiting = false;
async function finish(code: number): Promise<never> {
  if (!exiting) {
    exiting = true;
    await teardown();
    const left = children();
    if (left.length > 0) {
      console.error(`bench: child processes still running after teardown: ${left.join(', ')}`);
      if (code === 0) code = 1;
    }
  }
  process.exit(code);
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    console.error(`bench: ${signal}; tearing down`);
    void finish(130);
  });
}

const watchdog = setTimeout(() => {
  console.error(`bench: over the ${budgetS} s time budget (BENCH_TIMEOUT_S); tearing down`);
  // Teardown itself gets 60 s; then the process goes regardless.
  setTimeout(() => process.exit(3), 60_000).unref();
  void finish(3);
}, budgetS * 1000);
watchdog.unref();

async function main(): Promise<void> {
  // Registered first, so it runs last: nothing this process started outlives it.
  defer('leftover child processes', reapChildren);
  console.log(
    `bench: send path vs baseline; ${config.connections} connections, ${config.warmupS} s warm-up + ${config.durationS} s measured each; time budget ${budgetS} s`,
  );
  // BENCH_ONLY=verify or policy-state: that part alone (issue 29's verify at scale, bench/verify.ts;
  // issue 28's state storage, bench/policy-state.ts).
  const alone = ['verify', 'policy-state'].find((name) => process.env.BENCH_ONLY === name);
  const runs = (part: 'send' | 'compare' | 'pbx' | 'webhooks' | 'verify' | 'policy-state') =>
    alone ? part === alone : !config.only || config.only === part || (part === 'send' && (config.only === 'baseline' || config.only === 'floor' || config.only === 'send-path'));
  deciderBench();
  await preflight();
  // A part that cannot run is reported and the next one runs; the exit code says that one failed.
  const failed: string[] = [];
  const part = async (name: string, work: () => Promise<unknown>) => {
    const started = Date.now();
    try {
      await work();
    } catch (error) {
      failed.push(name);
      console.error(`bench: the ${name} part failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    }
    if (SMOKE) console.log(`bench: smoke: ${name} part ${failed.includes(name) ? 'FAILED' : 'ran'} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  };
  if (runs('send')) await part('send path', () => sendPathBench(config));
  // Decider, verify and send path beside the commit before (BENCH_BEFORE); a missing commit is said and skipped.
  if (runs('compare')) await part('compare', () => compareBench(config, { smoke: SMOKE }));
  if (runs('verify')) await part('verify', () => verifyBench({ smoke: SMOKE }));
  if (runs('policy-state')) await part('policy-state', () => policyStateBench({ smoke: SMOKE }));
  if (runs('pbx')) await part('pbx', () => pbxBench({ durationS: config.durationS, connections: config.connections }));
  if (runs('webhooks')) {
    await part('webhooks', () =>
      webhooksBench({
        eventsPerEndpoint: intEnv('BENCH_WEBHOOK_EVENTS', 5000),
        endpoints: SMOKE ? 1 : 4,
        connections: SMOKE ? 16 : 64,
        rounds: SMOKE ? 1 : 2,
        warmUp: !SMOKE,
        // A dead endpoint's attempt hangs this long; the smoke does not wait out the 15 s default.
        attemptTimeoutMs: SMOKE ? 1_000 : 15_000,
      }),
    );
  }
  if (failed.length > 0) throw new PartsFailed(failed);
}

class PartsFailed extends Error {
  constructor(readonly parts: string[]) {
    super(`these parts could not run to the end: ${parts.join(', ')}`);
  }
}

main()
  .then(() => finish(0))
  .catch((error) => {
    if (error instanceof PreflightError || error instanceof PartsFailed) console.error(`bench: ${error.message}`);
    else console.error('bench: failed:', error instanceof Error ? (error.stack ?? error.message) : error);
    void finish(1);
  });

