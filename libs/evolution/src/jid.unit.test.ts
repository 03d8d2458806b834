import { beforeEach, describe, expect, it, vi } from 'vitest';

// The real normalizePhone, counted: with a cache, a JID's number is parsed by libphonenumber once, not per look.
const parses = vi.hoisted(() => ({ count: 0 }));
vi.mock('@gw/contract', async (original) => {
  const actual = await original<typeof import('@gw/contract')>();
  return {
    ...actual,
    normalizePhone: (raw: string) => {
      parses.count++;
      return actual.normalizePhone(raw);
    },
  };
});
const { JidParseCache, parseJid, phoneOfJid } = await import('./jid.ts');

beforeEach(() => {
  parses.count = 0;
});

/** JIDs of every kind, well formed or not, with numbers that exist and that cannot. */
const SAMPLES: unknown[] = [
  '14155550123@s.whatsapp.net',
  '14155550123:7@s.whatsapp.net',
  '14155550123@c.us',
  '442071838750@s.whatsapp.net',
  '5511988887777@s.whatsapp.net',
  '99912345@s.whatsapp.net',
  '12345@s.whatsapp.net',
  '120363025246125486@g.us',
  '123456789012345:3@lid',
  'status@broadcast',
  '120363025246125486@newsletter',
  '14155550123@example.com',
  `${'1'.repeat(70)}@s.whatsapp.net`,
  '',
  42,
  null,
];

describe('parseJid', () => {
  it('gives the same answers with a cache as without one, asked once or again', () => {
    const cache = new JidParseCache();
    for (const round of [1, 2]) {
      for (const value of SAMPLES) {
        expect(parseJid(value, cache), `${String(value)} (round ${round})`).toEqual(parseJid(value));
        expect(phoneOfJid(value, cache), `${String(value)} (round ${round})`).toBe(phoneOfJid(value));
      }
    }
  });

  it('with a cache, parses a number once: the same JID, its device form and its c.us form answer from the first parse', () => {
    const cache = new JidParseCache();
    expect(parseJid('14155550123@s.whatsapp.net', cache)).toEqual({ kind: 'user', phone: '+14155550123' });
    expect(parseJid('14155550123@s.whatsapp.net', cache)).toEqual({ kind: 'user', phone: '+14155550123' });
    expect(parseJid('14155550123:7@s.whatsapp.net', cache)).toEqual({ kind: 'user', phone: '+14155550123' });
    expect(phoneOfJid('14155550123@c.us', cache)).toBe('+14155550123');
    expect(parses.count).toBe(1);
  });

  it('without a cache, remembers nothing: each look parses (no module state)', () => {
    parseJid('14155550123@s.whatsapp.net');
    parseJid('14155550123@s.whatsapp.net');
    expect(parses.count).toBe(2);
  });

  it('a number that cannot exist stays refused, also when asked again of the cache', () => {
    const cache = new JidParseCache();
    expect(parseJid('99912345@s.whatsapp.net', cache)).toBeNull();
    expect(parseJid('99912345@s.whatsapp.net', cache)).toBeNull();
    expect(parses.count).toBe(1);
  });

  it('caches are the callers\': one cache\'s numbers are not another\'s', () => {
    const first = new JidParseCache();
    parseJid('14155550123@s.whatsapp.net', first);
    parseJid('14155550123@s.whatsapp.net', new JidParseCache());
    expect(parses.count).toBe(2);
  });

  it('other JIDs are not phone numbers', () => {
    const cache = new JidParseCache();
    expect(parseJid('120363025246125486@g.us', cache)).toEqual({ kind: 'group', id: '120363025246125486@g.us' });
    expect(parseJid('123456789012345:3@lid', cache)).toEqual({ kind: 'lid', id: '123456789012345:3@lid' });
    expect(parseJid('status@broadcast', cache)).toEqual({ kind: 'broadcast', id: 'status@broadcast' });
    expect(parseJid('14155550123@example.com', cache)).toBeNull();
    expect(parses.count).toBe(0);
    expect(cache.size).toBe(0);
  });
});

describe('JidParseCache', () => {
  const user = (i: number) => `1415${String(i).padStart(7, '0')}@s.whatsapp.net`;

  it('stays bounded: it holds at most its capacity, however many numbers it sees', () => {
    const cache = new JidParseCache(100);
    for (let i = 0; i < 1000; i++) parseJid(user(i), cache);
    expect(cache.size).toBe(100);
    expect(new JidParseCache().capacity).toBe(4096);
  });

  it('forgets the number used longest ago first; one used again is kept', () => {
    const cache = new JidParseCache(3);
    parseJid('442071838750@s.whatsapp.net', cache); // used again below
    parseJid(user(1), cache); // used longest ago when the fourth comes
    parseJid(user(2), cache);
    parseJid('442071838750@s.whatsapp.net', cache);
    parseJid(user(3), cache);
    parses.count = 0;
    expect(parseJid('442071838750@s.whatsapp.net', cache)).toEqual({ kind: 'user', phone: '+442071838750' });
    expect(parses.count).toBe(0);
    expect(parseJid(user(1), cache)).toEqual({ kind: 'user', phone: '+14150000001' });
    expect(parses.count).toBe(1);
    expect(cache.size).toBe(3);
  });

  it('refuses a capacity that could hold nothing', () => {
    expect(() => new JidParseCache(0)).toThrow(RangeError);
    expect(() => new JidParseCache(1.5)).toThrow(RangeError);
  });
});
