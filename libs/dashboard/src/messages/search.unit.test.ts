import { describe, expect, it } from 'vitest';
import { parseUtc } from '../query-values.ts';
import { DEFAULT_DAYS, MAX_SEARCH_PAGE, pageLink, parseSearch } from './search.ts';

// The search of /messages as read from its query string: each key checked, errors in words.
const NOW = new Date('2026-03-10T12:00:00.000Z');
const ok = (raw: Record<string, unknown>) => {
  const result = parseSearch(raw, NOW);
  if (!result.ok) throw new Error(result.errors.join(' '));
  return result.search;
};
const errors = (raw: Record<string, unknown>) => {
  const result = parseSearch(raw, NOW);
  if (result.ok) throw new Error('expected errors');
  return result.errors;
};

describe('parseSearch', () => {
  it('without anything: the last 7 days, all decisions, page 1', () => {
    expect(ok({})).toEqual({
      messageId: null,
      logId: null,
      phone: null,
      from: new Date(NOW.getTime() - DEFAULT_DAYS * 86_400_000),
      before: null,
      defaultRange: true,
      decision: 'all',
      page: 1,
      byId: false,
    });
  });

  it('an id searches any time (unless a time is given), and may open the timeline', () => {
    expect(ok({ message_id: ' msg_1 ' })).toMatchObject({ messageId: 'msg_1', from: null, before: null, byId: true, defaultRange: false });
    expect(ok({ log_id: '1042' })).toMatchObject({ logId: 1042, from: null, byId: true });
    expect(ok({ log_id: '1042', from: '2026-03-01' })).toMatchObject({ from: new Date('2026-03-01T00:00:00Z') });
  });

  it('a phone: the whole number in E.164, and its digits for "contains"', () => {
    expect(ok({ phone: '+1 (415) 555-2671' }).phone).toEqual({ exact: '+14155552671', digits: '14155552671' });
    expect(ok({ phone: '5552' }).phone).toEqual({ exact: null, digits: '5552' });
    expect(errors({ phone: '55' })).toEqual(['Type at least 3 digits of the phone number.']);
    expect(errors({ phone: "1' OR 1=1" })).toEqual(['The phone number may hold digits, spaces, “+”, brackets and dashes only.']);
  });

  it('times in UTC: a "to" day or minute includes the whole of it', () => {
    expect(ok({ from: '2026-03-01 08:30', to: '2026-03-02' })).toMatchObject({ from: new Date('2026-03-01T08:30:00Z'), before: new Date('2026-03-03T00:00:00Z'), defaultRange: false });
    expect(ok({ to: '2026-03-02T10:15' })).toMatchObject({ from: null, before: new Date('2026-03-02T10:16:00Z') });
    expect(parseUtc('2026-02-30')).toBeNull();
    expect(parseUtc('2026-03-01T24:00')).toBeNull();
    expect(errors({ from: 'yesterday' })[0]).toMatch(/^The “from” time “yesterday” is not a date and time/);
    expect(errors({ from: '2026-03-05', to: '2026-03-01' })).toEqual(['The “from” time is after the “to” time.']);
  });

  it('refuses what it cannot read, each in words', () => {
    expect(errors({ log_id: 'abc' })[0]).toMatch(/^The log id is a whole number/);
    expect(errors({ log_id: '0' })[0]).toMatch(/^The log id is a whole number/);
    expect(errors({ decision: 'maybe' })).toEqual(['Choose the decision from the list: all, accepted or refused.']);
    expect(errors({ page: '0' })).toEqual([`The page is a number from 1 to ${MAX_SEARCH_PAGE}.`]);
    expect(errors({ page: String(MAX_SEARCH_PAGE + 1) })).toEqual([`The page is a number from 1 to ${MAX_SEARCH_PAGE}.`]);
    expect(errors({ message_id: ['a', 'b'] })).toEqual(['The message id was given more than once.']);
    expect(errors({ message_id: 'a\u0000b' })).toEqual(['The message id contains a NUL character.']);
    expect(errors({ message_id: 'x'.repeat(201) })).toEqual(['The message id is longer than 200 characters.']);
    expect(ok({ decision: 'refused', page: '3' })).toMatchObject({ decision: 'refused', page: 3 });
  });
});

describe('pageLink', () => {
  it('keeps the search and changes the page', () => {
    const result = parseSearch({ phone: '+1 415', decision: 'accepted', from: '2026-03-01' }, NOW);
    expect(pageLink(result.form, 2)).toBe('/messages?phone=%2B1+415&from=2026-03-01&decision=accepted&page=2');
    expect(pageLink(result.form, 1)).toBe('/messages?phone=%2B1+415&from=2026-03-01&decision=accepted');
    expect(pageLink(parseSearch({}, NOW).form, 1)).toBe('/messages');
  });
});
