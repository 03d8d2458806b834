import { describe, expect, it } from 'vitest';
import { BatchedLookup } from './batched-lookup.ts';
import { GroupCommit, ItemFailed, QueueFull } from './group-commit.ts';

describe('GroupCommit', () => {
  it('sends the first append alone and batches those that arrive while it is in flight', async () => {
    const flushed: number[][] = [];
    let release!: () => void;
    let first = true;
    const commit = new GroupCommit<number>(async (items) => {
      flushed.push(items);
      if (first) {
        first = false;
        await new Promise<void>((resolve) => (release = resolve));
      }
    });
    const a = commit.submit([1]);
    const b = commit.submit([2]);
    const c = commit.submit([3, 4]);
    release();
    await Promise.all([a, b, c]);
    expect(flushed).toEqual([[1], [2, 3, 4]]);
  });

  it('rejects every caller of a failed flush and recovers for the next one', async () => {
    let fail = true;
    const commit = new GroupCommit<number>(async () => {
      if (fail) throw new Error('broker down');
    });
    await expect(commit.submit([1])).rejects.toThrow('broker down');
    fail = false;
    await expect(commit.submit([2])).resolves.toBeUndefined();
  });
});

describe('GroupCommit with per-item failures and a bounded queue', () => {
  it('given a flush that wrote part of its items, rejects only the others', async () => {
    const commit = new GroupCommit<number>(async (items) => items.map((n) => (n % 2 === 0 ? new ItemFailed(new Error(`lost ${n}`)) : undefined)));
    const results = await Promise.allSettled([commit.one(1), commit.one(2), commit.one(3), commit.one(4)]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'rejected']);
    expect((results[1] as PromiseRejectedResult).reason).toEqual(new Error('lost 2'));
  });

  it('given a full queue, refuses at once with QueueFull and takes items again once it drains', async () => {
    let release!: () => void;
    const commit = new GroupCommit<number>(() => new Promise<void>((resolve) => (release = resolve)), { maxQueued: 2 });
    const inFlight = commit.one(1); // taken by the flush at once: not queued
    const queued = [commit.one(2), commit.one(3)];
    await expect(commit.one(4)).rejects.toBeInstanceOf(QueueFull);
    await expect(commit.submit([5])).rejects.toBeInstanceOf(QueueFull);
    release();
    await inFlight;
    release();
    await Promise.all(queued);
    const again = commit.one(6);
    release();
    await expect(again).resolves.toBeUndefined();
  });
});

describe('GroupCommit with results', () => {
  it('answers each caller with its own result from a shared flush', async () => {
    const flushed: number[][] = [];
    const commit = new GroupCommit<number, number>(async (items) => {
      flushed.push(items);
      await new Promise((r) => setTimeout(r, 5));
      return items.map((n) => n * 10);
    });
    const answers = await Promise.all([commit.one(1), commit.one(2), commit.one(3)]);
    expect(answers).toEqual([10, 20, 30]);
    expect(flushed).toEqual([[1], [2, 3]]);
  });
});

describe('BatchedLookup', () => {
  it('fetches the keys asked for while a query is in flight in one query, each key once', async () => {
    const queries: string[][] = [];
    const rows = new Map([['a', 1], ['b', 2]]);
    const lookup = new BatchedLookup<string, number>(async (keys) => {
      queries.push(keys);
      await new Promise((r) => setTimeout(r, 5));
      return new Map(keys.filter((k) => rows.has(k)).map((k) => [k, rows.get(k)!]));
    });
    const answers = await Promise.all([lookup.get('a'), lookup.get('b'), lookup.get('b'), lookup.get('zz')]);
    expect(answers).toEqual([1, 2, 2, undefined]);
    expect(queries).toEqual([['a'], ['b', 'zz']]);
    rows.set('a', 5); // nothing is cached: the next ask reads again
    expect(await lookup.get('a')).toBe(5);
  });
});
