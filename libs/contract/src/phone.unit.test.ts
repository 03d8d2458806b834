import { describe, expect, it } from 'vitest';
import { normalizePhone } from './phone.ts';

describe('normalizePhone', () => {
  it.each([
    ['+1 (415) 555-2671', '+14155552671'],
    ['14155552671', '+14155552671'],
    ['+44 20 7946 0958', '+442079460958'],
    ['+55 11 91234-5678', '+5511912345678'],
  ])('normalises %s to %s', (raw, expected) => {
    expect(normalizePhone(raw)).toBe(expected);
  });

  it.each(['', 'abc', '+1', '12', '+1 415 555 2671 ext 9', 'tel:+14155552671', '+0 123 456 789'])('refuses %j', (raw) => {
    expect(normalizePhone(raw)).toBeNull();
  });
});
