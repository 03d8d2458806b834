// What the fault suite watches besides the counts: consumer lag over time (from every process's
// /metrics, as Prometheus would), answer latency before, during and after each fault, and the
// partitions moving between a group's processes (from their "partitions assigned" log lines).
import { readFileSync, existsSync } from 'node:fs';
import type { Stack, StackProcess } from '../support/stack.ts';
import type { MessageRecord } from './clients.ts';

export interface LagSample {
  at: number;
  /** Records behind, summed over the group's partitions. */
  byGroup: Record<string, number>;
  total: number;
}

const LAG_LINE = /^gateway_consumer_lag\{([^}]*)\} (\d+(?:\.\d+)?)/;

/** The lag of every partition a process reports, keyed group/topic/partition. */
export function parseLag(metrics: string): Map<string, { group: string; lag: number }> {
  const lags = new Map<string, { group: string; lag: number }>();
  for (const line of metrics.split('\n')) {
    const match = LAG_LINE.exec(line);
    if (!match) continue;
    const labels = Object.fromEntries([...match[1]!.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    lags.set(`${labels.group}/${labels.topic}/${labels.partition}`, { group: String(labels.group), lag: Number(match[2]) });
  }
  return lags;
}

/** Samples the lag every `everyMs` until stopped. Each process of a group reports the group's lag; the highest report counts. */
export function sampleLag(stack: Stack, everyMs: number) {
  const samples: LagSample[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      const consumers = stack.processes.filter((name) => !name.startsWith('api'));
      const reports = await Promise.all(consumers.map((name) => fetch(stack.metricsUrl(name), { signal: AbortSignal.timeout(1_000) }).then((r) => r.text(), () => '')));
      const merged = new Map<string, { group: string; lag: number }>();
      for (const report of reports) {
        for (const [key, value] of parseLag(report)) if ((merged.get(key)?.lag ?? -1) < value.lag) merged.set(key, value);
      }
      const byGroup: Record<string, number> = {};
      for (const { group, lag } of merged.values()) byGroup[group] = (byGroup[group] ?? 0) + lag;
      samples.push({ at: Date.now(), byGroup, total: Object.values(byGroup).reduce((a, b) => a + b, 0) });
      await new Promise((r) => setTimeout(r, everyMs));
    }
  })();
  return {
    samples,
    stop: async () => {
      running = false;
      await loop;
    },
  };
}

export interface FaultWindow {
  fault: string;
  began: number;
  /** When the stack was ready again. */
  ready: number;
}

export interface LagAroundFault {
  fault: string;
  before: number;
  peak: number;
  /** Seconds from the fault until the lag was back at its level before it; null if it never was. */
  back_after_s: number | null;
}

/** Per fault: the lag just before it, its peak until the next fault, and when it was back. */
export function lagAroundFaults(samples: LagSample[], windows: FaultWindow[]): LagAroundFault[] {
  return windows.map((window, i) => {
    const end = windows[i + 1]?.began ?? Infinity;
    const before = Math.max(0, ...samples.filter((s) => s.at >= window.began - 5_000 && s.at < window.began).map((s) => s.total));
    const after = samples.filter((s) => s.at >= window.began && s.at < end);
    const peak = Math.max(0, ...after.map((s) => s.total));
    // Back once a sample after the peak is no higher than before the fault (a little slack for the sends in flight).
    const peakAt = after.find((s) => s.total === peak)?.at ?? window.began;
    const back = after.find((s) => s.at >= peakAt && s.total <= Math.max(before, 5));
    return { fault: window.fault, before, peak, back_after_s: back ? round((back.at - window.began) / 1000) : null };
  });
}

export interface PhaseLatency {
  phase: string;
  messages: number;
  p50_ms: number;
  p99_ms: number;
  max_ms: number;
}

/** Answer latency (first try to final answer) of the messages begun before the first fault, and during each fault until it was ready again. */
export function latencyByPhase(records: MessageRecord[], windows: FaultWindow[]): PhaseLatency[] {
  const phase = (name: string, from: number, to: number): PhaseLatency => {
    const times = records.filter((r) => r.startedAt >= from && r.startedAt < to && r.elapsedMs !== null).map((r) => r.elapsedMs!).sort((a, b) => a - b);
    const at = (q: number) => times[Math.min(times.length - 1, Math.floor(times.length * q))] ?? 0;
    return { phase: name, messages: times.length, p50_ms: at(0.5), p99_ms: at(0.99), max_ms: times.at(-1) ?? 0 };
  };
  const first = windows[0]?.began ?? Infinity;
  return [phase('before the first fault', 0, first), ...windows.map((w) => phase(`during: ${w.fault}`, w.began, Math.max(w.ready, w.began + 1_000)))];
}

export interface Assignment {
  at: number;
  process: StackProcess;
  group: string;
  partitions: number;
  /** The partitions themselves, as `topic:partition`. */
  held: string[];
}

/** Every "partitions assigned" line the processes logged: which process held how many partitions of which group, when. */
export function assignments(stack: Stack): Assignment[] {
  const found: Assignment[] = [];
  for (const process of stack.processes) {
    const file = stack.logFile(process);
    if (!existsSync(file)) continue;
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      if (!line.includes('partitions assigned')) continue;
      try {
        // pino's isoTime: "time" is an ISO string.
        const entry = JSON.parse(line) as { time: string; groupId: string; partitions: Record<string, number[]> };
        const held = Object.entries(entry.partitions ?? {}).flatMap(([topic, list]) => list.map((partition) => `${topic}:${partition}`));
        found.push({ at: Date.parse(entry.time), process, group: entry.groupId, partitions: held.length, held });
      } catch {
        // a line cut by a kill
      }
    }
  }
  return found.sort((a, b) => a.at - b.at);
}

/**
 * Whether the surviving processes now hold every partition of the groups the killed processes
 * were in: for each such group, the partitions its members last logged before `killedAt` are all
 * in the survivors' latest assignments. (A member's last line can be stale: a process that left
 * its group during a broker fault logs nothing until it joins again, so counts alone mislead.)
 */
export function takenOver(all: Assignment[], killed: StackProcess[], killedAt: number): boolean {
  const latest = (lines: Assignment[]) => new Map(lines.map((a) => [`${a.group}\u0000${a.process}`, a]));
  const before = [...latest(all.filter((a) => a.at < killedAt)).values()];
  const survivors = [...latest(all.filter((a) => !killed.includes(a.process))).values()];
  const groups = new Set(before.filter((a) => killed.includes(a.process)).map((a) => a.group));
  return [...groups].every((group) => {
    const needed = new Set(before.filter((a) => a.group === group).flatMap((a) => a.held));
    const held = new Set(survivors.filter((a) => a.group === group).flatMap((a) => a.held));
    return needed.size > 0 && [...needed].every((partition) => held.has(partition));
  });
}

const round = (n: number) => Math.round(n * 10) / 10;
