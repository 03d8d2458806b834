import { describe, expect, it } from 'vitest';
import { EverySoOften, RecentReads } from './recent-reads.ts';

describe('RecentReads', () => {
  it('gives a value for ttlMs from its read, and a hit does not extend it', () => {
    let now = 0;
    const reads = new RecentReads<number, string>({ ttlMs: 1000, maxEntries: 10, clock: () => now });
    reads.set(1, 'a');
    now = 600;
    expect(reads.get(1)).toBe('a');
    now = 999;
    expect(reads.get(1)).toBe('a');
    now = 1000;
    expect(reads.get(1)).toBeUndefined();
    reads.set(1, 'b');
    now = 1500;
    expect(reads.get(1)).toBe('b');
    reads.delete(1);
    expect(reads.get(1)).toBeUndefined();
  });

  it('past maxEntries forgets everything rather than growing', () => {
    const reads = new RecentReads<number, number>({ ttlMs: 1000, maxEntries: 2, clock: () => 0 });
    reads.set(1, 1);
    reads.set(2, 2);
    reads.set(2, 20);
    expect(reads.get(1)).toBe(1);
    reads.set(3, 3);
    expect([reads.get(1), reads.get(2), reads.get(3)]).toEqual([undefined, undefined, 3]);
  });
});

describe('EverySoOften', () => {
  it('is due once per everyMs per key', () => {
    let now = 0;
    const often = new EverySoOften<number>({ everyMs: 100, maxEntries: 10, clock: () => now });
    expect([often.due(1), often.due(1), often.due(2)]).toEqual([true, false, true]);
    now = 99;
    expect(often.due(1)).toBe(false);
    now = 100;
    expect([often.due(1), often.due(1)]).toEqual([true, false]);
  });
});
