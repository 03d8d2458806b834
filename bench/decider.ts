import { benchDecider } from './lib/decider-workload.ts';

/** Decisions per second of the pure policy decider in-process (fold + decide, no I/O). */
export function deciderBench(): void {
  const n = Number(process.env.BENCH_DECISIONS ?? 20_000);
  benchDecider(2_000); // warm-up: JIT and caches
  const rate = benchDecider(n);
  const sparse = benchDecider(n, 30_000);
  console.log('\n== policy decider (in-process)');
  console.log(`decider: ${Math.round(rate)} decisions/s at one send every 2 s of event time (${n} commands)`);
  console.log(`decider: ${Math.round(sparse)} decisions/s at one send every 30 s (smaller windows to scan)`);
}
