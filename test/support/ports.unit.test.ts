import { describe, expect, it } from 'vitest';
import { freePort, portRange } from './ports.ts';

describe('freePort', () => {
  it('never hands out the same port twice in a process, even before any of them is bound', async () => {
    // More ports than a test run starts; with the old random pick, two of them collided about
    // once in a few hundred stacks.
    const ports = await Promise.all(Array.from({ length: 2_000 }, () => freePort()));
    expect(new Set(ports).size).toBe(ports.length);
    const { from, to } = portRange(Number(process.env.VITEST_POOL_ID ?? '1'));
    for (const port of ports) expect(port).toBeGreaterThanOrEqual(from), expect(port).toBeLessThan(to);
  }, 30_000);

  it('gives the workers of a run disjoint ranges, clear of the three-node cluster and the ephemeral ports', () => {
    const ranges = [1, 2, 3, 4].map(portRange);
    for (const [i, a] of ranges.entries()) {
      expect(a.from).toBeGreaterThanOrEqual(20_000);
      expect(a.to).toBeLessThanOrEqual(29_000);
      for (const b of ranges.slice(i + 1)) expect(a.to <= b.from || b.to <= a.from).toBe(true);
    }
    // A pool id the run never gives (none, zero) still yields a range.
    expect(portRange(Number.NaN)).toEqual(portRange(1));
  });
});
