import { fileURLToPath } from 'node:url';
import { benchDecider, deciderRun } from './lib/decider-workload.ts';

/** Event-time gaps between one busy customer's sends: a day of history of ~2.9k, ~43k and ~173k remembered sends. */
export const DECIDER_DEPTHS = [30_000, 2_000, 500] as const;
const DAY_MS = 86_400_000;

/**
 * Decisions per second of the pure policy decider in-process (fold + decide, no I/O), at three
 * history depths: each measured after a full day of sends at its pace has been folded (untimed),
 * so the rules decide on the whole remembered window (issue 29: at least 100,000/s at every depth).
 */
export function deciderBench(): Array<{ gapMs: number; history: number; perSecond: number; snapshotBytes: number }> {
  const n = Number(process.env.BENCH_DECISIONS ?? 20_000);
  benchDecider(2_000); // warm-up: JIT and caches
  console.log('\n== policy decider (in-process)');
  const rows = DECIDER_DEPTHS.map((gapMs) => {
    const history = Number(process.env.BENCH_SMOKE === '1' ? 0 : Math.round(DAY_MS / gapMs));
    const { perSecond, snapshotBytes } = deciderRun(n, gapMs, history);
    console.log(`decider: ${String(Math.round(perSecond)).padStart(8)} decisions/s, one send every ${gapMs / 1000} s of event time, ${history} sends of history (${n} commands timed); state snapshot ${Math.round(snapshotBytes / 1024)} KiB`);
    return { gapMs, history, perSecond, snapshotBytes };
  });
  return rows;
}

// Standalone: `npx tsx bench/decider.ts` (make bench runs it through bench/run.ts).
if (process.argv[1] === fileURLToPath(import.meta.url)) deciderBench();
