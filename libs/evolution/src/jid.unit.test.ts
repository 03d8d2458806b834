import { beforeEach, describe, expect, it, vi } from 'vitest';

// The real normalizePhone, counted: a JID's number is parsed by libphonenumber once, not per look.
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
const { parseJid, phoneOfJid } = await import('./jid.ts');

beforeEach(() => {
  parses.count = 0;
});

describe('parseJid', () => {
  it('parses a number once: the same JID, its device form and its c.us form answer from the first parse', () => {
    expect(parseJid('14155550123@s.whatsapp.net')).toEqual({ kind: 'user', phone: '+14155550123' });
    expect(parseJid('14155550123@s.whatsapp.net')).toEqual({ kind: 'user', phone: '+14155550123' });
    expect(parseJid('14155550123:7@s.whatsapp.net')).toEqual({ kind: 'user', phone: '+14155550123' });
    expect(phoneOfJid('14155550123@c.us')).toBe('+14155550123');
    expect(parses.count).toBe(1);
  });

  it('a number that cannot exist stays refused, also when asked again', () => {
    expect(parseJid('99912345@s.whatsapp.net')).toBeNull();
    expect(parseJid('99912345@s.whatsapp.net')).toBeNull();
    expect(parses.count).toBe(1);
  });

  it('remembers a bounded number of them: the oldest is parsed again after 4,096 others', () => {
    expect(parseJid('442071838750@s.whatsapp.net')).toEqual({ kind: 'user', phone: '+442071838750' });
    for (let i = 0; i < 4096; i++) parseJid(`1415${String(i).padStart(7, '0')}@s.whatsapp.net`);
    parses.count = 0;
    expect(parseJid('442071838750@s.whatsapp.net')).toEqual({ kind: 'user', phone: '+442071838750' });
    expect(parses.count).toBe(1);
  });

  it('other JIDs are not phone numbers', () => {
    expect(parseJid('120363025246125486@g.us')).toEqual({ kind: 'group', id: '120363025246125486@g.us' });
    expect(parseJid('123456789012345:3@lid')).toEqual({ kind: 'lid', id: '123456789012345:3@lid' });
    expect(parseJid('status@broadcast')).toEqual({ kind: 'broadcast', id: 'status@broadcast' });
    expect(parseJid('14155550123@example.com')).toBeNull();
    expect(parses.count).toBe(0);
  });
});
