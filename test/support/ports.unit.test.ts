import { describe, expect, it } from 'vitest';
import { freePort } from './ports.ts';

describe('freePort', () => {
  it('never hands out the same port twice in a process, even before any of them is bound', async () => {
    // More ports than a test run starts; with the old random pick, two of them collided about
    // once in a few hundred stacks.
    const ports = await Promise.all(Array.from({ length: 2_000 }, () => freePort()));
    expect(new Set(ports).size).toBe(ports.length);
    for (const port of ports) expect(port).toBeGreaterThanOrEqual(20_000), expect(port).toBeLessThan(32_000);
  }, 30_000);
});
