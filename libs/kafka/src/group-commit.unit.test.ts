import { describe, expect, it } from 'vitest';
import { GroupCommit } from './group-commit.ts';

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
