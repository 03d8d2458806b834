// CPU profiles of the send path's processes (BENCH_PROFILE=1, `make profile`): scripts/bench.sh
// starts every service process of the run (STACK_NODE_FLAGS, test/support/stack.ts) and the
// floor's stages under `node --cpu-prof` (node refuses it in NODE_OPTIONS), and each writes a
// .cpuprofile into BENCH_PROFILE_DIR when it exits; only the samples inside the measured window
// count. A .cpuprofile is JSON: `nodes` (id, callFrame, children), `samples` (a node id per
// sample), `timeDeltas` (µs between samples) from `startTime`, on the monotonic clock
// process.hrtime reads.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { childProcesses } from './cpu.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Set by scripts/bench.sh under BENCH_PROFILE=1 (one folder per run under .run/profiles/). */
export const PROFILE_DIR = process.env.BENCH_PROFILE_DIR ?? '';
export const PROFILING = PROFILE_DIR !== '';
/** The node flags of a profiled process (the floor's stages take them as the services do). */
export const PROFILE_FLAGS = (process.env.STACK_NODE_FLAGS ?? '').split(/\s+/).filter(Boolean);

/** Now on the profiles' clock (CLOCK_MONOTONIC), in µs. */
export const monotonicUs = (): number => Number(process.hrtime.bigint() / 1000n);

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}
interface CpuProfile {
  nodes: Array<{ id: number; callFrame: CallFrame }>;
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface HotFunction {
  name: string;
  selfMs: number;
  /** Of the process's busy (non-idle) samples in the window. */
  pct: number;
}

export interface ProcessProfile {
  label: string;
  pid: number;
  file: string;
  /** CPU time sampled in the window (idle excluded). */
  busyMs: number;
  top: HotFunction[];
}

/** `file:///…/node_modules/kafkajs/src/x.js` -> `kafkajs/src/x.js`; this checkout's files relative to it. */
function shortUrl(url: string): string {
  const path = url.replace(/^file:\/\//, '');
  const inModules = path.lastIndexOf('/node_modules/');
  if (inModules >= 0) return path.slice(inModules + '/node_modules/'.length);
  return path.startsWith(ROOT) ? path.slice(ROOT.length) : path;
}

function frameName(frame: CallFrame): string {
  const name = frame.functionName || '(anonymous)';
  // The column too: tsx's output puts a module's small functions on its first lines.
  return frame.url ? `${name} ${shortUrl(frame.url)}:${frame.lineNumber + 1}:${frame.columnNumber + 1}` : name;
}

/** Self time per function over the samples inside [fromUs, toUs]; each sample weighs the gap to the next one. */
export function hotFunctions(profile: CpuProfile, window: { fromUs: number; toUs: number }, count = 10): { busyMs: number; top: HotFunction[] } {
  const frames = new Map(profile.nodes.map((node) => [node.id, node.callFrame]));
  const selfUs = new Map<string, number>();
  let at = profile.startTime;
  let busyUs = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    at += profile.timeDeltas[i] ?? 0;
    const weight = profile.timeDeltas[i + 1] ?? 0;
    if (at < window.fromUs || at > window.toUs) continue;
    const frame = frames.get(profile.samples[i]!);
    if (!frame || frame.functionName === '(idle)') continue;
    const name = frameName(frame);
    selfUs.set(name, (selfUs.get(name) ?? 0) + weight);
    busyUs += weight;
  }
  const top = [...selfUs.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .map(([name, us]) => ({ name, selfMs: Math.round(us / 100) / 10, pct: busyUs > 0 ? Math.round((us / busyUs) * 1000) / 10 : 0 }));
  return { busyMs: Math.round(busyUs / 1000), top };
}

/**
 * The profiles the given processes (pid -> label) wrote into PROFILE_DIR, each read over the
 * window. Call after the processes exited (a profile is written at exit).
 */
export function readProfiles(processes: Map<number, string>, window: { fromUs: number; toUs: number }): ProcessProfile[] {
  if (!existsSync(PROFILE_DIR)) return [];
  const out: ProcessProfile[] = [];
  for (const file of readdirSync(PROFILE_DIR)) {
    // CPU.<date>.<time>.<pid>.<thread>.<sequence>.cpuprofile; thread 0 is the main one.
    const [, pid, thread] = /^CPU\.\d+\.\d+\.(\d+)\.(\d+)\./.exec(file) ?? [];
    const label = processes.get(Number(pid));
    if (!label) continue;
    const profile = JSON.parse(readFileSync(`${PROFILE_DIR}/${file}`, 'utf8')) as CpuProfile;
    const hot = hotFunctions(profile, window);
    // A worker thread (e.g. a log transport) that did nothing in the window is left out.
    if (thread !== '0' && hot.busyMs < 10) continue;
    out.push({ label: thread === '0' ? label : `${label}, worker thread ${thread}`, pid: Number(pid), file: `${PROFILE_DIR}/${file}`, ...hot });
  }
  return out.sort((a, b) => a.label.localeCompare(b.label));
}

/** The top lists as text, one block per process. */
export function formatProfiles(title: string, profiles: ProcessProfile[], sends: number): string {
  // Samples are taken on the thread's clock while it is not idle; node does not mark its event-loop
  // waits idle, so "(program)" holds some waiting too and the sampled total runs above /proc's CPU.
  const lines = [`== ${title}: ten heaviest functions by self time (samples in the measured window; % of the process's samples)`];
  for (const p of profiles) {
    lines.push(`-- ${p.label} (pid ${p.pid}): ${p.busyMs} ms sampled${sends > 0 ? ` (${(p.busyMs / sends).toFixed(2)} ms per send)` : ''}  [${p.file.startsWith(ROOT) ? p.file.slice(ROOT.length) : p.file}]`);
    for (const f of p.top) lines.push(`   ${String(f.selfMs.toFixed(1)).padStart(9)} ms ${String(f.pct.toFixed(1)).padStart(5)} %  ${f.name}`);
  }
  return lines.join('\n');
}

/**
 * The measured window of one run's processes: `start` notes which processes run (their pids name
 * their profile files) and when; `read`, once they have exited, gives their profiles over it.
 */
export function profileWindow() {
  let processes = new Map<number, string>();
  const window = { fromUs: 0, toUs: 0 };
  return {
    start() {
      processes = childProcesses();
      window.fromUs = monotonicUs();
    },
    stop() {
      window.toUs = monotonicUs();
    },
    read: (): ProcessProfile[] => (PROFILING ? readProfiles(processes, window) : []),
  };
}
