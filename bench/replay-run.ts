// The compliance-replay bench on its own: `node --max-semi-space-size=64 --import tsx bench/replay-run.ts` (make bench runs
// it after the send-path bench, from bench/run.ts). Same teardown guarantees as run.ts.
import { preflight, PreflightError } from './lib/preflight.ts';
import { teardown } from './lib/teardown.ts';
import { replayBench, replayConfigFromEnv } from './replay.ts';

const budgetS = Number(process.env.BENCH_TIMEOUT_S ?? 600);
let exiting = false;
async function finish(code: number): Promise<never> {
  if (!exiting) {
    exiting = true;
    await teardown();
  }
  process.exit(code);
}
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => void finish(130));
setTimeout(() => {
  console.error(`bench: over the ${budgetS} s time budget (BENCH_TIMEOUT_S); tearing down`);
  setTimeout(() => process.exit(3), 60_000).unref();
  void finish(3);
}, budgetS * 1000).unref();

try {
  await preflight();
  await replayBench({ ...replayConfigFromEnv() });
  await finish(0);
} catch (error) {
  if (error instanceof PreflightError) console.error(`bench: ${error.message}`);
  else console.error('bench: failed:', error instanceof Error ? (error.stack ?? error.message) : error);
  await finish(1);
}
