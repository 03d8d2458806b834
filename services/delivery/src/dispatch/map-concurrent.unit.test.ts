import { describe, expect, it } from 'vitest';
import { mapConcurrent } from './map-concurrent.ts';

describe('mapConcurrent', () => {
  it('keeps results in input order with at most `limit` in flight', async () => {
    let inFlight = 0;
    let most = 0;
    const results = await mapConcurrent([5, 1, 4, 2, 3], 2, async (n) => {
      most = Math.max(most, ++inFlight);
      await new Promise((r) => setTimeout(r, n));
      inFlight--;
      return n * 10;
    });
    expect(results).toEqual([50, 10, 40, 20, 30]);
    expect(most).toBe(2);
  });

  it('after a failure starts nothing more, and throws only once the items in flight have finished', async () => {
    const started: number[] = [];
    const finished: number[] = [];
    const run = mapConcurrent([1, 2, 3, 4, 5, 6], 2, async (n) => {
      started.push(n);
      if (n === 2) throw new Error('boom');
      await new Promise((r) => setTimeout(r, 20));
      finished.push(n);
      return n;
    });
    await expect(run).rejects.toThrow('boom');
    // 1 was in flight when 2 failed: it finished before the failure surfaced, and nothing after it was started.
    expect(started).toEqual([1, 2]);
    expect(finished).toEqual([1]);
  });
});
