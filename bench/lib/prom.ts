// Just enough of the Prometheus text format to read the services' /metrics after a run.

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

export function parseMetrics(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line.startsWith('#') || line.trim() === '') continue;
    const match = LINE.exec(line);
    if (!match) continue;
    const labels: Record<string, string> = {};
    for (const m of (match[2] ?? '').matchAll(LABEL)) labels[m[1]!] = m[2]!;
    samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return samples;
}

export async function scrape(url: string): Promise<Sample[]> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(3000) });
    if (!response.ok) return [];
    return parseMetrics(await response.text());
  } catch {
    return [];
  }
}

function matches(sample: Sample, name: string, labels: Record<string, string>): boolean {
  if (sample.name !== name) return false;
  return Object.entries(labels).every(([k, v]) => sample.labels[k] === v);
}

/** Sum of the matching samples (e.g. a counter over all its label sets). */
export function sum(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  return samples.filter((s) => matches(s, name, labels)).reduce((total, s) => total + s.value, 0);
}

export function pick(samples: Sample[], name: string, labels: Record<string, string> = {}): Sample[] {
  return samples.filter((s) => matches(s, name, labels));
}

export interface HistogramDelta {
  count: number;
  meanMs: number | null;
  /** Upper bound of the bucket holding the quantile (the histogram's resolution), in ms. */
  p50LeMs: number | null;
  p99LeMs: number | null;
}

/** The observations a histogram received between two scrapes, summarised. */
export function histogramDelta(before: Sample[], after: Sample[], name: string, labels: Record<string, string>): HistogramDelta {
  const buckets = new Map<number, number>();
  for (const s of pick(after, `${name}_bucket`, labels)) {
    const le = s.labels.le === '+Inf' ? Infinity : Number(s.labels.le);
    buckets.set(le, (buckets.get(le) ?? 0) + s.value);
  }
  for (const s of pick(before, `${name}_bucket`, labels)) {
    const le = s.labels.le === '+Inf' ? Infinity : Number(s.labels.le);
    buckets.set(le, (buckets.get(le) ?? 0) - s.value);
  }
  const count = sum(after, `${name}_count`, labels) - sum(before, `${name}_count`, labels);
  const total = sum(after, `${name}_sum`, labels) - sum(before, `${name}_sum`, labels);
  const sorted = [...buckets.entries()].sort((a, b) => a[0] - b[0]);
  const quantile = (q: number): number | null => {
    if (count <= 0) return null;
    for (const [le, cumulative] of sorted) if (cumulative >= q * count) return le * 1000;
    return null;
  };
  return { count, meanMs: count > 0 ? (total / count) * 1000 : null, p50LeMs: quantile(0.5), p99LeMs: quantile(0.99) };
}
