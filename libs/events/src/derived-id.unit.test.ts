import { describe, expect, it } from 'vitest';
import { derivedEventId } from './codec.ts';

describe('derivedEventId', () => {
  it('is the same for the same source and label, and a UUID in form', () => {
    const id = derivedEventId('3f1c2b7e-0000-4000-8000-000000000001', 'delivery-fact');
    expect(derivedEventId('3f1c2b7e-0000-4000-8000-000000000001', 'delivery-fact')).toBe(id);
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-8[0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it('differs by source and by label', () => {
    const ids = new Set([derivedEventId('a', 'x'), derivedEventId('b', 'x'), derivedEventId('a', 'y')]);
    expect(ids.size).toBe(3);
  });
});
