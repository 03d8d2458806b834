// CPU per process over a window, read from /proc (Linux): what each part of the system burnt
// while the load ran. Cheap, and unlike `ps -o %cpu` it is not averaged over the process lifetime.
import { readdirSync, readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';

const TICKS_PER_S = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

interface ProcInfo {
  pid: number;
  ppid: number;
  comm: string;
  ticks: number;
  cmdline: string;
}

/** The label of the bench's own process (the load generator, the simulator, the baseline server, readers). */
export const BENCH_PROCESS = 'bench process (load generator, simulator, baseline server)';

function readProc(pid: number): ProcInfo | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const close = stat.lastIndexOf(')');
    const comm = stat.slice(stat.indexOf('(') + 1, close);
    const rest = stat.slice(close + 2).split(' ');
    const ticks = Number(rest[11]) + Number(rest[12]);
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
    return { pid, ppid: Number(rest[1]), comm, ticks, cmdline };
  } catch {
    return null;
  }
}

function allProcs(): ProcInfo[] {
  const out: ProcInfo[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const info = readProc(Number(entry));
    if (info) out.push(info);
  }
  return out;
}

/** A service process (`api service`) or a floor stage (`floor api`), or null for another child. */
function childLabel(p: ProcInfo): string | null {
  const service = /services\/([a-z-]+)\/src\/main\.ts/.exec(p.cmdline)?.[1];
  if (service) return `${service} service`;
  if (!p.cmdline.includes('bench/floor/stage.ts')) return null;
  try {
    const role = readFileSync(`/proc/${p.pid}/environ`, 'utf8').split('\0').find((v) => v.startsWith('FLOOR_ROLE='))?.slice('FLOOR_ROLE='.length);
    return `floor ${role ?? '?'}`;
  } catch {
    return 'floor ?';
  }
}

/** The bench's service and floor processes now running, pid -> label (to find their profiles). */
export function childProcesses(): Map<number, string> {
  const out = new Map<number, string>();
  for (const p of allProcs()) {
    const label = p.ppid === process.pid ? childLabel(p) : null;
    if (label) out.set(p.pid, label);
  }
  return out;
}

/** Which component a process belongs to, or null for processes the bench does not account for. */
function classify(p: ProcInfo, benchChildren: Set<number>): string | null {
  if (p.pid === process.pid) return BENCH_PROCESS;
  if (benchChildren.has(p.pid)) return childLabel(p) ?? 'bench children (other)';
  if (p.cmdline.includes('-Dgw.infra.component=kafka')) return 'kafka broker';
  // A node of the local three-node cluster (deploy/cluster/kafka-cluster.sh): the three count as one component.
  if (p.cmdline.includes('-Dgw.cluster.node=')) return 'kafka brokers (cluster)';
  if (p.cmdline.includes('-Dgw.infra.component=registry')) return 'schema registry';
  if (p.comm === 'postgres') return 'postgres (all backends)';
  return null;
}

export interface CpuSnapshot {
  at: number;
  perPid: Map<number, { label: string; ticks: number }>;
  machine: { busy: number; total: number };
  cores: number;
}

function machineTicks(): { busy: number; total: number; cores: number } {
  const lines = readFileSync('/proc/stat', 'utf8').split('\n');
  const fields = lines[0]!.trim().split(/\s+/).slice(1).map(Number);
  const total = fields.reduce((a, b) => a + b, 0);
  const idle = (fields[3] ?? 0) + (fields[4] ?? 0);
  const cores = lines.filter((l) => /^cpu\d+/.test(l)).length;
  return { busy: total - idle, total, cores };
}

export function cpuSnapshot(): CpuSnapshot {
  const procs = allProcs();
  // Direct children of the bench (the service processes) and their children (tsx's esbuild).
  const children = new Set<number>(procs.filter((p) => p.ppid === process.pid).map((p) => p.pid));
  const perPid = new Map<number, { label: string; ticks: number }>();
  for (const p of procs) {
    const label = classify(p, children);
    if (label) perPid.set(p.pid, { label, ticks: p.ticks });
  }
  const machine = machineTicks();
  return { at: Date.now(), perPid, machine: { busy: machine.busy, total: machine.total }, cores: machine.cores };
}

export interface CpuUsage {
  seconds: number;
  cores: number;
  /** Percent of one core, by component. */
  byComponent: Record<string, number>;
  /** Percent of the whole machine (all cores) that was busy; includes processes of other users. */
  machineBusyPct: number;
  /** Percent of one core used by processes outside the bench's components (other workloads). */
  otherPct: number;
}

export function cpuUsage(before: CpuSnapshot, after: CpuSnapshot): CpuUsage {
  const seconds = (after.at - before.at) / 1000;
  const byTicks = new Map<string, number>();
  for (const [pid, now] of after.perPid) {
    const then = before.perPid.get(pid)?.ticks ?? 0; // a process born during the window counts from zero
    byTicks.set(now.label, (byTicks.get(now.label) ?? 0) + Math.max(0, now.ticks - then));
  }
  const byComponent: Record<string, number> = {};
  let accounted = 0;
  for (const [label, ticks] of [...byTicks.entries()].sort((a, b) => b[1] - a[1])) {
    byComponent[label] = round1(((ticks / TICKS_PER_S) / seconds) * 100);
    accounted += ticks;
  }
  const machineBusy = after.machine.busy - before.machine.busy;
  const machineTotal = after.machine.total - before.machine.total;
  const machineBusyPct = machineTotal > 0 ? round1((machineBusy / machineTotal) * 100) : 0;
  // /proc/stat counts in the same USER_HZ ticks, summed over cores.
  const otherPct = round1(Math.max(0, ((machineBusy - accounted) / TICKS_PER_S / seconds) * 100));
  return { seconds: round1(seconds), cores: after.cores, byComponent, machineBusyPct, otherPct };
}

function round1(value: number): number {
  return Math.round(value * 10) / 10;
}
