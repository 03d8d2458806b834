import type { VelocityLimits } from '../config/plans.ts';

export interface BucketLevel {
  tokens: number;
  at: number;
}

/**
 * The instance's bucket refilled up to `now`. A missing bucket is full (a new or long-idle
 * instance may burst). Time never runs backwards: a command older than the last send refills
 * nothing, so late commands cannot mint tokens.
 */
export function bucketAt(bucket: BucketLevel | undefined, now: number, limits: VelocityLimits): BucketLevel {
  if (!bucket) return { tokens: limits.burst, at: now };
  const at = Math.max(bucket.at, now);
  const refilled = bucket.tokens + ((at - bucket.at) * limits.refillPerMinute) / 60_000;
  return { tokens: Math.min(limits.burst, refilled), at };
}

/** Milliseconds until the bucket holds one whole token again. */
export function msUntilToken(level: BucketLevel, limits: VelocityLimits): number {
  if (level.tokens >= 1 - 1e-9) return 0;
  // The epsilon absorbs binary floating-point noise (5999/6000 of a token is 1 ms short, not 2).
  return Math.max(1, Math.ceil(((1 - level.tokens) * 60_000) / limits.refillPerMinute - 1e-6));
}

/** Levels are plain doubles: JSON round-trips them exactly, so a replay folds to the same bits. */
export const takeToken = (level: BucketLevel): BucketLevel => ({ tokens: level.tokens - 1, at: level.at });
