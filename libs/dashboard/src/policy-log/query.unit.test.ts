import { describe, expect, it } from 'vitest';
import { phoneDigits as recipientDigits, parseUtc } from '../query-values.ts';
import { downloadName, exportFormat, filterValues, hrefWith, parsePolicyLogQuery } from './query.ts';
import { VerifyGate } from './verify-gate.ts';

const INSTANCES = [
  { id: 'ins_front', name: 'front-desk', deleted: false },
  { id: 'ins_old', name: 'old-phone', deleted: true },
];

describe('the policy log\'s filters', () => {
  it('reads every filter into the export\'s filter, and keeps them as typed for the form and the links', () => {
    const q = parsePolicyLogQuery(
      { decision: 'refused', code: 'recipient_suppressed', purpose: 'operational', instance: 'ins_old', recipient: '+1 (415) 555-01', from: '2026-03-01', to: '2026-03-02 10:30', page: '3' },
      INSTANCES,
    );
    expect(q.problems).toEqual([]);
    expect(q.filtered).toBe(true);
    expect(q.page).toBe(3);
    expect(q.filter).toEqual({
      decision: 'rejected',
      errorCode: 'recipient_suppressed',
      purpose: 'operational',
      instanceId: 'ins_old',
      recipientDigits: '141555501',
      from: new Date('2026-03-01T00:00:00.000Z'),
      // A "to" time includes the whole minute typed.
      to: new Date('2026-03-02T10:31:00.000Z'),
    });
    expect(hrefWith('/policy-log/export', { format: 'csv', ...filterValues(q.form) })).toBe(
      '/policy-log/export?format=csv&decision=refused&code=recipient_suppressed&purpose=operational&instance=ins_old&recipient=%2B1+%28415%29+555-01&from=2026-03-01&to=2026-03-02+10%3A30',
    );
  });

  it('filters nothing without a query, and a "to" day includes the whole day', () => {
    const none = parsePolicyLogQuery({}, INSTANCES);
    expect(none.filtered).toBe(false);
    expect(Object.values(none.filter).every((v) => v === null)).toBe(true);
    expect(parsePolicyLogQuery({ to: '2026-03-02' }, []).filter.to).toEqual(new Date('2026-03-03T00:00:00.000Z'));
    expect(parsePolicyLogQuery({ decision: 'accepted' }, []).filter.decision).toBe('accepted');
  });

  it('ignores, and names in words, what it does not understand: another customer\'s instance among them', () => {
    const q = parsePolicyLogQuery(
      { decision: 'maybe', code: 'DROP TABLE', purpose: 'x y', instance: 'ins_of_someone_else', recipient: 'abc', from: '2026-02-30', to: 'soon', page: '0' },
      INSTANCES,
    );
    expect(q.filtered).toBe(false);
    expect(q.page).toBe(1);
    expect(q.problems).toEqual([
      'The decision “maybe” is not one of the choices (all, accepted, refused); all are shown.',
      'The refusal code “DROP TABLE” is not a code (e.g. recipient_suppressed); it is ignored.',
      'The purpose “x y” is not a purpose (e.g. transactional); it is ignored.',
      'The instance “ins_of_someone_else” is not one of your instances; it is ignored.',
      'The recipient search “abc” is not part of a phone number (digits only); it is ignored.',
      'The “from” time “2026-02-30” is not a date and time (write YYYY-MM-DD or YYYY-MM-DD HH:MM, in UTC); it is ignored.',
      'The “to” time “soon” is not a date and time (write YYYY-MM-DD or YYYY-MM-DD HH:MM, in UTC); it is ignored.',
      'The page “0” is not a page number from 1 to 10000; the first page is shown.',
    ]);
    expect(parsePolicyLogQuery({ code: ['a', 'b'] }, []).problems).toEqual(['The refusal code was given more than once; it is ignored.']);
    expect(parsePolicyLogQuery({ recipient: 'a\u0000b' }, []).problems).toHaveLength(1);
    const reversed = parsePolicyLogQuery({ from: '2026-03-05', to: '2026-03-01' }, []);
    expect(reversed.problems).toEqual(['The “from” time is after the “to” time; both are ignored.']);
    expect([reversed.filter.from, reversed.filter.to, reversed.form.from, reversed.form.to]).toEqual([null, null, '', '']);
  });

  it('parses UTC days and times, and phone digits', () => {
    expect(parseUtc('2026-03-01T09:05:07')).toEqual({ at: new Date('2026-03-01T09:05:07.000Z'), step: 1000 });
    expect(parseUtc('2026-13-01')).toBeNull();
    expect(parseUtc('2026-03-01 24:00')).toBeNull();
    expect(recipientDigits('+44 20 7946.0958')).toBe('442079460958');
    expect(recipientDigits('+')).toBeNull();
    expect(recipientDigits('1'.repeat(16))).toBeNull();
  });

  it('takes the export\'s format from a list, and names downloads by the UTC time', () => {
    expect(exportFormat({ format: 'csv' })).toBe('csv');
    expect(exportFormat({ format: 'ndjson' })).toBe('ndjson');
    expect(exportFormat({ format: 'xlsx' })).toBeNull();
    expect(exportFormat({ format: ['csv', 'csv'] })).toBeNull();
    expect(exportFormat({})).toBeNull();
    expect(downloadName('policy-log', new Date('2026-03-01T09:05:07.123Z'), 'csv')).toBe('policy-log-2026-03-01-090507Z.csv');
  });
});

describe('the verification gate', () => {
  it('lets one verification per customer run, and a few at most in the process', () => {
    const gate = new VerifyGate(2);
    expect(gate.enter('cus_a')).toBe('go');
    expect(gate.enter('cus_a')).toBe('running');
    expect(gate.enter('cus_b')).toBe('go');
    expect(gate.enter('cus_c')).toBe('busy');
    gate.leave('cus_a');
    expect(gate.enter('cus_c')).toBe('go');
    expect(gate.enter('cus_a')).toBe('busy');
    gate.leave('cus_b');
    expect(gate.enter('cus_a')).toBe('go');
  });
});
