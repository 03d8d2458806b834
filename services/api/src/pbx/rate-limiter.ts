/**
 * A token bucket per integration: `perMinute` requests a minute, bursting up to that many.
 * In memory, per API process: with several API processes each enforces it for its own traffic.
 */
export class PbxRateLimiter {
  private readonly buckets = new Map<number, { tokens: number; at: number }>();

  take(integrationId: number, perMinute: number, now: number): boolean {
    const bucket = this.buckets.get(integrationId) ?? { tokens: perMinute, at: now };
    const refilled = Math.min(perMinute, bucket.tokens + ((now - bucket.at) / 60_000) * perMinute);
    if (refilled < 1) {
      this.buckets.set(integrationId, { tokens: refilled, at: now });
      return false;
    }
    this.buckets.set(integrationId, { tokens: refilled - 1, at: now });
    return true;
  }
}
