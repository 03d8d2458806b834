import { describe, expect, it } from 'vitest';
import { csvFileName, csvRow, CSV_COLUMNS } from './csv.ts';
import type { CurrentRow } from './data.ts';
import { utcText } from '../format.ts';
import { MAX_PAGE } from '../pager.ts';
import {
  byText,
  containsPattern,
  dayRange,
  historyLabel,
  hrefWith,
  orList,
  pageNumber,
  recipientText,
  parseDay,
  parseSuppressionQuery,
  phoneDigits,
  reasonText,
  sourceLabel,
  spreadsheetSafe,
  suppressionFilterValues,
} from './query.ts';

describe('parseDay', () => {
  it('reads YYYY-MM-DD as UTC midnight', () => {
    expect(parseDay('2026-01-31')?.toISOString()).toBe('2026-01-31T00:00:00.000Z');
  });
  it('refuses days that are not on the calendar, and other shapes', () => {
    for (const bad of ['2026-02-30', '2026-13-01', '2026-00-10', '26-01-01', '2026-1-1', '2026-01-31T00:00', 'tomorrow', '', '1999-12-31', '9999-01-01']) expect(parseDay(bad), bad).toBeNull();
  });
});

describe('dayRange', () => {
  it('makes `to` inclusive: the bound is the start of the next day', () => {
    const problems: string[] = [];
    const range = dayRange({ from: '2026-03-01', to: '2026-03-31' }, problems);
    expect(problems).toEqual([]);
    expect(range.fromAt?.toISOString()).toBe('2026-03-01T00:00:00.000Z');
    expect(range.toBefore?.toISOString()).toBe('2026-04-01T00:00:00.000Z');
    expect([range.from, range.to]).toEqual(['2026-03-01', '2026-03-31']);
  });
  it('ignores a bad date with a notice, and both when from is after to', () => {
    const problems: string[] = [];
    expect(dayRange({ from: '2026-02-31' }, problems)).toEqual({ from: '', to: '', fromAt: null, toBefore: null });
    expect(problems[0]).toContain('“2026-02-31” is not a date');
    const swapped: string[] = [];
    expect(dayRange({ from: '2026-03-02', to: '2026-03-01' }, swapped).fromAt).toBeNull();
    expect(swapped).toEqual(['The “from” date is after the “to” date; both are ignored.']);
  });
});

describe('pageNumber', () => {
  it('reads 1 to MAX_PAGE; anything else is page 1 with a notice', () => {
    const problems: string[] = [];
    expect(pageNumber({ page: '3' }, 'page', 'The page', problems)).toBe(3);
    expect(pageNumber({}, 'page', 'The page', problems)).toBe(1);
    expect(problems).toEqual([]);
    for (const bad of ['0', '-1', 'x', '1.5', String(MAX_PAGE + 1), '99999999999999999999']) {
      const p: string[] = [];
      expect(pageNumber({ page: bad }, 'page', 'The page', p)).toBe(1);
      expect(p).toHaveLength(1);
    }
  });
  it('a repeated key is a notice, not a crash', () => {
    const problems: string[] = [];
    expect(pageNumber({ page: ['2', '3'] }, 'page', 'The page', problems)).toBe(1);
    expect(problems[0]).toContain('more than once');
  });
});

describe('phoneDigits', () => {
  it('keeps the digits of what a person types', () => {
    expect(phoneDigits('+1 (415) 555-0123')).toBe('14155550123');
    expect(phoneDigits('555')).toBe('555');
  });
  it('refuses letters, wildcards and no digits at all', () => {
    for (const bad of ['abc', '55%', '5_5', '+', ' - ', '1234567890123456']) expect(phoneDigits(bad), bad).toBeNull();
  });
});

describe('containsPattern', () => {
  it('escapes the ILIKE wildcards and the escape itself', () => {
    expect(containsPattern('50% off_now\\x')).toBe('%50\\% off\\_now\\\\x%');
    expect(containsPattern('stop')).toBe('%stop%');
  });
});

describe('parseSuppressionQuery', () => {
  it('reads every filter and both pages', () => {
    const q = parseSuppressionQuery({ source: 'opt_out', phone: '+1 415', from: '2026-01-01', to: '2026-01-02', page: '2', hpage: '4', add: '+14155550123' });
    expect(q).toMatchObject({ source: 'opt_out', phone: '1415', page: 2, historyPage: 4, add: '+14155550123', problems: [] });
    expect(suppressionFilterValues(q)).toEqual({ source: 'opt_out', phone: '1415', from: '2026-01-01', to: '2026-01-02' });
  });
  it('ignores what it does not understand and says so (never throws)', () => {
    const q = parseSuppressionQuery({ source: 'everyone', phone: 'bob', from: 'yesterday', page: 'last', hpage: '0', add: '\u0000' });
    expect(q).toMatchObject({ source: 'all', phone: '', page: 1, historyPage: 1, add: '' });
    expect(q.days.fromAt).toBeNull();
    expect(q.problems).toHaveLength(6);
    expect(q.problems.join(' ')).toContain('The source “everyone” is not one of the choices');
    expect(suppressionFilterValues(q)).toEqual({ source: '', phone: '', from: '', to: '' });
  });
});

describe('labels', () => {
  it('names the kinds of suppression', () => {
    expect(sourceLabel('opt_out')).toBe('Opted out');
    expect(sourceLabel('manual')).toBe('Manual');
  });
  it('says what each history row is', () => {
    expect(historyLabel('unsuppressed', 'opt_out', 'keyword:START')).toBe('Opted back in by replying START');
    expect(historyLabel('suppressed', 'opt_out', 'keyword:STOP')).toBe('Opted out by replying STOP');
    expect(historyLabel('suppressed', 'opt_out', '')).toBe('Opted out');
    expect(historyLabel('suppressed', 'manual', 'asked by phone')).toBe('Suppressed manually');
    expect(historyLabel('unsuppressed', 'manual', 'wrong number')).toBe('Manual suppression lifted');
  });
  it('writes keyword reasons in words, and a person\'s reason as written', () => {
    expect(reasonText('opt_out', 'keyword:STOP')).toBe('Replied “STOP”');
    expect(reasonText('manual', 'keyword:STOP')).toBe('keyword:STOP');
    expect(byText('recipient')).toBe('the recipient');
    expect(byText('ann@example.test')).toBe('ann@example.test');
  });
  it('shows times as UTC text', () => {
    expect(utcText(new Date('2026-01-31T12:00:05.123Z'))).toBe('2026-01-31 12:00:05 UTC');
    expect(utcText(null)).toBe('');
  });
  it('lists keywords in words', () => {
    expect(orList(['START', 'UNSTOP', 'YES'])).toBe('START, UNSTOP or YES');
    expect(orList(['START'])).toBe('START');
    expect(orList([])).toBe('');
  });
  it('builds links without empty values', () => {
    expect(hrefWith('/x', { a: '', b: 'c d', n: 2, z: null }, '#h')).toBe('/x?b=c+d&n=2#h');
    expect(hrefWith('/x', {})).toBe('/x');
  });
});

describe('the CSV', () => {
  const row: CurrentRow = {
    recipient: '+14155550123',
    source: 'opt_out',
    reason: 'keyword:STOP',
    created_by: 'recipient',
    created_at: new Date('2026-01-31T12:00:05.123Z'),
    since_key: '2026-01-31T12:00:05.123000Z',
    cause_instance_id: 'ins_1',
    cause_inbound_id: 'in_1',
    cause_text: 'STOP, please, "now"',
    cause_received_at: new Date('2026-01-31T12:00:04.000Z'),
    instance_name: 'front-desk',
    instance_deleted: false,
    cause_linked_from: null,
    linked_number: null,
  };
  it('has the columns asked for, quoted as RFC 4180 says', () => {
    expect(CSV_COLUMNS).toEqual(['recipient', 'source', 'reason', 'by', 'since', 'cause_text', 'cause_received_at', 'instance']);
    expect(csvRow(row)).toBe('+14155550123,opt_out,keyword:STOP,recipient,2026-01-31T12:00:05.123Z,"STOP, please, ""now""",2026-01-31T12:00:04.000Z,front-desk\r\n');
  });
  it('never lets a message someone sent become a spreadsheet formula', () => {
    const line = csvRow({ ...row, cause_text: '=HYPERLINK("http://x.test","click")', reason: '@SUM(1)', instance_name: null, cause_instance_id: '-ins' });
    expect(line).toContain(`"'=HYPERLINK(""http://x.test"",""click"")"`);
    expect(line).toContain(",'@SUM(1),");
    expect(line.endsWith(",'-ins\r\n")).toBe(true);
    // The number is kept as it is.
    expect(line.startsWith('+14155550123,')).toBe(true);
    expect(spreadsheetSafe('+1')).toBe("'+1");
    expect(spreadsheetSafe('fine')).toBe('fine');
    expect(spreadsheetSafe(null)).toBe('');
  });
  it('a manual suppression has no cause', () => {
    expect(csvRow({ ...row, source: 'manual', reason: 'asked by phone', created_by: 'ann@example.test', cause_instance_id: null, cause_inbound_id: null, cause_text: null, cause_received_at: null, instance_name: null, instance_deleted: null })).toBe(
      '+14155550123,manual,asked by phone,ann@example.test,2026-01-31T12:00:05.123Z,,,\r\n',
    );
  });
  it('is named for the day', () => {
    expect(csvFileName(new Date('2026-05-04T23:59:00Z'))).toBe('suppressed-recipients-2026-05-04.csv');
  });
});

describe('linked ids (@lid) on the page', () => {
  it('shows a linked id shortened and plainly, with its number once known; a number as it is', () => {
    expect(recipientText('123456789012345@lid', null)).toBe('Linked id 1234…@lid, number not known yet');
    expect(recipientText('123456789012345@lid', '+14155550301')).toBe('Linked id 1234…@lid, number +14155550301');
    expect(recipientText('123456789012345@lid')).toBe('Linked id 1234…@lid');
    expect(recipientText('+14155550301', null)).toBe('+14155550301');
  });
});
