import { describe, expect, it } from 'vitest';
import { chatLabel, cursorText, flagLabel, inboundFilterValues, parseCursor, parseInboundQuery } from './query.ts';

const mine = new Set(['ins_a', 'ins_b']);

describe('parseCursor', () => {
  it('reads <time to the microsecond>_<id>, and writes it back the same', () => {
    const text = '2026-01-31T12:00:05.123456Z_8f1c2a3b-1234-5abc-8def-0123456789ab';
    expect(parseCursor(text)).toEqual({ at: '2026-01-31T12:00:05.123456Z', id: '8f1c2a3b-1234-5abc-8def-0123456789ab' });
    expect(cursorText(parseCursor(text)!)).toBe(text);
    // Ids with underscores: the time never has one, so the first underscore splits.
    expect(parseCursor('2026-01-31T12:00:05.000000Z_in_1')).toEqual({ at: '2026-01-31T12:00:05.000000Z', id: 'in_1' });
  });
  it('refuses what Postgres would refuse or what is not a cursor', () => {
    for (const bad of [
      '',
      'x',
      '2026-01-31T12:00:05.123456Z',
      '2026-01-31T12:00:05.123456Z_',
      '2026-02-30T12:00:05.123456Z_a',
      '2026-01-31T24:00:05.123456Z_a',
      '2026-01-31T12:60:05.123456Z_a',
      '0000-01-01T00:00:00.000000Z_a',
      '2026-01-31T12:00:05Z_a',
      '2026-01-31 12:00:05.123456Z_a',
      "2026-01-31T12:00:05.123456Z_a'; DROP TABLE x",
      `2026-01-31T12:00:05.123456Z_${'a'.repeat(101)}`,
    ]) {
      expect(parseCursor(bad), bad).toBeNull();
    }
  });
});

describe('parseInboundQuery', () => {
  it('reads the search, the filters, an id and a page', () => {
    const q = parseInboundQuery({ q: ' 50% off ', instance: 'ins_b', chat: 'group', flag: 'flagged', from: '2026-01-01', to: '2026-01-31', before: '2026-01-31T12:00:05.123456Z_in_9' }, mine);
    expect(q).toMatchObject({ q: '50% off', instance: 'ins_b', chat: 'group', flag: 'flagged', id: '', before: { at: '2026-01-31T12:00:05.123456Z', id: 'in_9' }, after: null, problems: [] });
    expect(inboundFilterValues(q)).toEqual({ q: '50% off', instance: 'ins_b', chat: 'group', flag: 'flagged', from: '2026-01-01', to: '2026-01-31' });
    expect(parseInboundQuery({ id: 'abc-123' }, mine).id).toBe('abc-123');
  });
  it('defaults to everything, newest first', () => {
    const q = parseInboundQuery({}, mine);
    expect(q).toMatchObject({ q: '', instance: '', chat: 'all', flag: 'all', id: '', before: null, after: null, problems: [] });
    expect(inboundFilterValues(q)).toEqual({ q: '', instance: '', chat: '', flag: '', from: '', to: '' });
  });
  it('ignores another customer\'s instance, unknown choices, bad ids and pages, with a notice each', () => {
    const q = parseInboundQuery({ instance: 'ins_theirs', chat: 'email', flag: 'spam', id: 'a b', after: 'nonsense', q: 'x\u0000' }, mine);
    expect(q).toMatchObject({ q: '', instance: '', chat: 'all', flag: 'all', id: '', before: null, after: null });
    expect(q.problems).toHaveLength(6);
    expect(q.problems[1]).toBe('The instance chosen is not one of yours; messages of every instance are shown.');
  });
});

describe('labels', () => {
  it('flags', () => {
    expect(flagLabel('opt_out')).toBe('Opted out (keyword)');
    expect(flagLabel('opt_in')).toBe('Opted back in');
    expect(flagLabel('flagged')).toBe('Possible opt-out request — review');
    expect(flagLabel(null)).toBe('');
  });
  it('chats', () => {
    expect(chatLabel('direct', null)).toBe('1:1');
    expect(chatLabel('group', '120363025555555555')).toBe('Group 120363025555555555');
  });
});
