// Runs one checkout's decider benchmark in a process of its own and prints its figures as JSON:
//   node --import tsx bench/compare/decider-runner.ts <checkout>
// The workload is the same in both checkouts (one busy customer); it lives in libs/policy in the
// commit before the decider rework and in bench/lib after it.
import { existsSync } from 'node:fs';

const tree = process.argv[2];
if (!tree) throw new Error('usage: decider-runner.ts <checkout>');
const before = `${tree}/libs/policy/src/bench.ts`;
const module = (await import(existsSync(before) ? before : `${tree}/bench/lib/decider-workload.ts`)) as { benchDecider(n: number, gapMs?: number): number };
const n = Number(process.env.BENCH_DECISIONS ?? 20_000);
module.benchDecider(2_000); // warm-up: the JIT
process.stdout.write(`${JSON.stringify({ busy: module.benchDecider(n), sparse: module.benchDecider(n, 30_000), decisions: n })}\n`);
