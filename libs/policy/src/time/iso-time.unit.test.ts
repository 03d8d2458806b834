import { describe, expect, it } from 'vitest';
import { isoTime } from './iso-time.ts';

/** Date's answer, or the error it throws, so both sides compare alike. */
const viaDate = (ms: number): string => {
  try {
    return new Date(ms).toISOString();
  } catch (error) {
    return `throws ${(error as Error).name}`;
  }
};
const viaIsoTime = (ms: number): string => {
  try {
    return isoTime(ms);
  } catch (error) {
    return `throws ${(error as Error).name}`;
  }
};

describe('isoTime: exactly what toISOString writes', () => {
  it('at the edges of four-digit years, of months, leap days, centuries and the epoch', () => {
    const edges = [
      -62_167_219_200_000, -62_167_219_200_001, 253_402_300_799_999, 253_402_300_800_000, 0, -0, -1, 1, 999, 1000,
      Date.UTC(2000, 1, 29), Date.UTC(1900, 1, 28, 23, 59, 59, 999), Date.UTC(1900, 2, 1), Date.UTC(2100, 1, 28, 12),
      Date.UTC(2024, 11, 31, 23, 59, 59, 999), Date.UTC(2025, 0, 1), Date.UTC(1600, 1, 29), Date.UTC(1969, 11, 31, 23, 59, 59, 999),
      Date.UTC(9999, 11, 31), Date.UTC(-1, 0, 1), 8.64e15, -8.64e15, 8.64e15 + 1, 1.5, -1.5, Number.NaN, Number.POSITIVE_INFINITY,
    ];
    for (const ms of edges) expect(viaIsoTime(ms), String(ms)).toBe(viaDate(ms));
  });

  it('at 200,000 random instants across the whole range Date holds and within four-digit years', () => {
    let seed = 29;
    const random = () => {
      seed = (Math.imul(seed, 1_103_515_245) + 12_345) >>> 0;
      return seed / 2 ** 32;
    };
    const differing: string[] = [];
    for (let i = 0; i < 200_000; i++) {
      const span = i % 2 === 0 ? 8.64e15 : 3.2e14;
      const ms = Math.round((random() * 2 - 1) * span);
      if (viaIsoTime(ms) !== viaDate(ms)) differing.push(`${ms}: ${viaIsoTime(ms)} != ${viaDate(ms)}`);
    }
    expect(differing.slice(0, 5)).toEqual([]);
  });
});
