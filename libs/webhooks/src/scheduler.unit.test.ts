import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { DeliveryScheduler, SchedulerQueueFullError } from './scheduler.ts';

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Enqueues `count` attempts for one endpoint, each taking `ms`; returns a completion counter. */
function flood(s: DeliveryScheduler, key: string, count: number, ms: number): { done: number } {
  const counter = { done: 0 };
  for (let i = 0; i < count; i++) {
    s.run(key, async () => {
      await sleep(ms);
      counter.done++;
    }).catch(() => {});
  }
  return counter;
}

describe('DeliveryScheduler', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('given one healthy endpoint alone, when flooded, then it runs at its per-endpoint limit', async () => {
    const s = new DeliveryScheduler({ globalConcurrency: 16, perEndpointConcurrency: 4 });
    const healthy = flood(s, 'healthy', 10_000, 10);
    expect(s.activeFor('healthy')).toBe(4);
    await vi.advanceTimersByTimeAsync(2_000);
    expect(healthy.done).toBe(800); // 4 in flight × 100 per second × 2 s
  });

  it('given a dead endpoint (15 s timeouts) next to a healthy one, then the healthy throughput drops by less than 10 %', async () => {
    const baseline = new DeliveryScheduler({ globalConcurrency: 16, perEndpointConcurrency: 4 });
    const alone = flood(baseline, 'healthy', 10_000, 10);
    await vi.advanceTimersByTimeAsync(30_000);
    const aloneDone = alone.done;

    const s = new DeliveryScheduler({ globalConcurrency: 16, perEndpointConcurrency: 4 });
    const dead = flood(s, 'dead', 10_000, 15_000); // enqueued first, with a far longer backlog
    const healthy = flood(s, 'healthy', 10_000, 10);
    await vi.advanceTimersByTimeAsync(30_000);

    expect(s.activeFor('dead')).toBeLessThanOrEqual(4);
    expect(dead.done).toBe(8); // 4 at a time, 15 s each
    expect(healthy.done).toBeGreaterThanOrEqual(aloneDone * 0.9);
  });

  it('given many slow endpoints and a global limit sized for them, then a healthy endpoint keeps its throughput', async () => {
    const s = new DeliveryScheduler({ globalConcurrency: 24, perEndpointConcurrency: 2 });
    for (let i = 0; i < 10; i++) flood(s, `slow-${i}`, 1_000, 5_000);
    const healthy = flood(s, 'healthy', 10_000, 10);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(healthy.done).toBeGreaterThanOrEqual(2 * 100 * 10 * 0.9);
    expect(s.stats().active).toBe(22);
  });

  it('given the global limit is the bottleneck, then free slots go to the endpoint with fewer in flight, not by arrival order', async () => {
    const s = new DeliveryScheduler({ globalConcurrency: 2, perEndpointConcurrency: 2 });
    const order: string[] = [];
    const jobs: Promise<unknown>[] = [];
    for (let i = 0; i < 4; i++) jobs.push(s.run('a', async () => { order.push('a'); await sleep(10); }));
    for (let i = 0; i < 4; i++) jobs.push(s.run('b', async () => { order.push('b'); await sleep(10); }));
    await vi.advanceTimersByTimeAsync(100);
    await Promise.all(jobs);
    // a enqueued 4 first and took both slots; from then on b and a alternate.
    expect(order).toEqual(['a', 'a', 'b', 'a', 'b', 'a', 'b', 'b']);
  });

  it('given a per-endpoint limit function, then a failing endpoint can be held to 1', async () => {
    const s = new DeliveryScheduler({ globalConcurrency: 8, perEndpointConcurrency: (k) => (k === 'failing' ? 1 : 4) });
    flood(s, 'failing', 10, 1_000);
    flood(s, 'ok', 10, 1_000);
    expect([s.activeFor('failing'), s.activeFor('ok')]).toEqual([1, 4]);
  });

  it('passes results and errors through, and reports idle', async () => {
    const s = new DeliveryScheduler({ globalConcurrency: 2, perEndpointConcurrency: 1 });
    const ok = s.run('e', async () => 42);
    const bad = s.run('e', async () => {
      throw new Error('boom');
    });
    const sync = s.run('e', () => {
      throw new Error('sync boom');
    });
    await expect(ok).resolves.toBe(42);
    await expect(bad).rejects.toThrow('boom');
    await expect(sync).rejects.toThrow('sync boom');
    await s.idle();
    expect(s.stats()).toEqual({ active: 0, queued: 0, endpoints: 0 });
  });

  it('given a bounded queue, then the overflow is refused', async () => {
    const s = new DeliveryScheduler({ globalConcurrency: 2, perEndpointConcurrency: 1, maxQueuedPerEndpoint: 2 });
    flood(s, 'e', 3, 100); // 1 running, 2 queued
    expect(s.queuedFor('e')).toBe(2);
    await expect(s.run('e', async () => 1)).rejects.toBeInstanceOf(SchedulerQueueFullError);
    await expect(s.run('other', async () => 1)).resolves.toBe(1);
  });
});
