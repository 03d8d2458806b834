import { RETENTION } from '../config/policy-config.ts';
import type { QualityBucket } from '../state.ts';

const HOUR_MS = 3_600_000;

export type QualityCounter = Exclude<keyof QualityBucket, 'hour'>;

const emptyBucket = (hour: number): QualityBucket => ({ hour, judged: 0, violations: 0, accepted: 0, optOuts: 0, delivered: 0, failed: 0 });

/**
 * Adds to the hourly bucket of `at` and drops buckets older than the retention. Hourly buckets
 * keep the per-instance memory at most RETENTION.qualityHours entries whatever the traffic.
 */
export function countQuality(buckets: readonly QualityBucket[] | undefined, at: number, add: Partial<Record<QualityCounter, number>>): QualityBucket[] {
  const hour = Math.floor(at / HOUR_MS) * HOUR_MS;
  const cutoff = hour - RETENTION.qualityHours * HOUR_MS;
  // Nearly always (one decision after another in the same hour): the last bucket (they are oldest
  // first, as this function keeps them) is this hour's and none is past the retention, so the copy
  // is one slice, not a filtered rebuild (issue 29).
  const last = buckets && buckets.length > 0 ? buckets[buckets.length - 1]! : undefined;
  if (last !== undefined && last.hour === hour && buckets![0]!.hour > cutoff && (buckets!.length === 1 || buckets![buckets!.length - 2]!.hour < hour)) {
    const target = { ...last };
    for (const counter of Object.keys(add) as QualityCounter[]) target[counter] += add[counter]!;
    const kept = buckets!.slice();
    kept[kept.length - 1] = target;
    return kept;
  }
  // One pass: the buckets kept, and the first one of this hour among them.
  const kept: QualityBucket[] = [];
  let index = -1;
  if (buckets) {
    for (const bucket of buckets) {
      if (!(bucket.hour > cutoff)) continue;
      if (index < 0 && bucket.hour === hour) index = kept.length;
      kept.push(bucket);
    }
  }
  const target = index >= 0 ? { ...kept[index]! } : emptyBucket(hour);
  for (const counter of Object.keys(add) as QualityCounter[]) target[counter] += add[counter]!;
  if (index >= 0) kept[index] = target;
  else {
    kept.push(target);
    kept.sort((a, b) => a.hour - b.hour);
  }
  return kept;
}

/** Totals of the buckets within the last `windowHours` hours before `at` (the current hour included). */
export function qualityTotals(buckets: readonly QualityBucket[] | undefined, at: number, windowHours: number): QualityBucket {
  const hour = Math.floor(at / HOUR_MS) * HOUR_MS;
  const total = emptyBucket(hour);
  for (const bucket of buckets ?? []) {
    if (bucket.hour <= hour - windowHours * HOUR_MS || bucket.hour > hour) continue;
    total.judged += bucket.judged;
    total.violations += bucket.violations;
    total.accepted += bucket.accepted;
    total.optOuts += bucket.optOuts;
    total.delivered += bucket.delivered;
    total.failed += bucket.failed;
  }
  return total;
}
