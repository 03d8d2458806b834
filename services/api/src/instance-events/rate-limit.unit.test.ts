import { describe, expect, it } from 'vitest';
import { InstanceEventRateLimit } from './rate-limit.ts';

describe('InstanceEventRateLimit', () => {
  it('passes a burst, then refuses with the wait until the next token, per instance', () => {
    const limit = new InstanceEventRateLimit({ perSecond: 2, burst: 3 });
    expect([0, 0, 0].map(() => limit.take('ins_a', 1_000))).toEqual([0, 0, 0]);
    expect(limit.take('ins_a', 1_000)).toBe(500);
    expect(limit.take('ins_b', 1_000)).toBe(0); // another instance has its own bucket
    expect(limit.take('ins_a', 1_250)).toBe(250);
    expect(limit.take('ins_a', 1_500)).toBe(0);
    // Refilled up to the burst, never beyond it.
    expect(Array.from({ length: 4 }, () => limit.take('ins_a', 60_000))).toEqual([0, 0, 0, 500]);
  });
});
