import { describe, expect, it } from 'vitest';
import { maskEmail } from './mask.ts';

describe('maskEmail', () => {
  it('keeps the first letters and the top-level domain only', () => {
    expect(maskEmail('alice@example.com')).toBe('a***@e***.com');
    expect(maskEmail('bob@localhost')).toBe('b***@l***');
    expect(maskEmail('not an address')).toBe('***');
    expect(maskEmail('@x.test')).toBe('***');
  });
});
