/**
 * A token bucket per instance: `burst` events at once, refilled at `perSecond`. In memory, per
 * API process (each process limits the traffic it takes; a manager's retries may land on another).
 * Checked after authentication, so nobody without the instance's token can spend its budget.
 */
export class InstanceEventRateLimit {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(private readonly rate: { perSecond: number; burst: number }) {}

  /** 0 when the event may pass (one token taken), else the milliseconds until a token is back. */
  take(instanceId: string, now: number): number {
    const { perSecond, burst } = this.rate;
    const bucket = this.buckets.get(instanceId) ?? { tokens: burst, at: now };
    const tokens = Math.min(burst, bucket.tokens + (Math.max(0, now - bucket.at) / 1000) * perSecond);
    if (tokens < 1) {
      this.buckets.set(instanceId, { tokens, at: now });
      return Math.ceil(((1 - tokens) / perSecond) * 1000);
    }
    this.buckets.set(instanceId, { tokens: tokens - 1, at: now });
    return 0;
  }
}
