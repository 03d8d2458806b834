// verify hashes a record identical to its row once (identicalCopies), and reads its hot rows with
// a hand-written check instead of zod's copy (CheckedPolicyLogRow): neither may let a forged copy
// pass. Entries from the pinned log (test/fixtures/policy-log).
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import type { SendDecided } from '@gw/events';
import { canonicalJson, chainedFields, entryHash, fromLogRow, GENESIS_HASH, PolicyLogRow, toLogRow } from '@gw/policy-log';
import { compareDigest, digests, identicalCopies, sameCopy } from './copies.ts';
import { CheckedPolicyLogRow } from './entries.ts';

const pinned = JSON.parse(gunzipSync(readFileSync(new URL('../../../test/fixtures/policy-log/log-68ee338.json.gz', import.meta.url))).toString('utf8')) as { entries: SendDecided[] };

const entry = (): SendDecided => {
  const e = { ...pinned.entries[3]!, dispatch: null, prev_hash: GENESIS_HASH } as SendDecided;
  e.entry_hash = entryHash(e.prev_hash, e);
  return e;
};

/** The row Postgres would give back (decided_at a Date, the jsonb parsed). */
const rowOf = (e: SendDecided): PolicyLogRow => {
  const written = JSON.parse(JSON.stringify(toLogRow(e))) as PolicyLogRow & { decided_at: string };
  return { ...written, decided_at: new Date(written.decided_at) };
};

/** The record as avsc decodes it: each reason an instance whose prototype has enumerable methods. */
function decoded(e: SendDecided): SendDecided {
  const proto = { clone() {}, toBuffer() {}, name: 'RuleOutcome' };
  return { ...e, reasons: e.reasons.map((r) => Object.assign(Object.create(proto), r)) };
}

describe('identicalCopies: one hash for a record that is its row to the letter', () => {
  it('takes a decoded record and the row it was written to for identical, with one canonical form', () => {
    const record = decoded(entry());
    const row = fromLogRow(rowOf(record));
    expect(identicalCopies(record, row)).toBe(true);
    expect(identicalCopies(row, record)).toBe(true);
    expect(canonicalJson(chainedFields(record))).toBe(canonicalJson(chainedFields(row)));
    expect(digests(record)).toEqual(digests(row));
  });

  const forgeries: Array<[string, (e: SendDecided) => void]> = [
    ['a column', (e) => void (e.recipient = '+15550000000')],
    ['the error code (null to absent)', (e) => void delete (e as Partial<SendDecided>).error_code],
    ['the error text', (e) => void (e.error_message = 'other')],
    ['prev_hash', (e) => void (e.prev_hash = 'f'.repeat(64))],
    ['entry_hash', (e) => void (e.entry_hash = 'f'.repeat(64))],
    ['a rule outcome', (e) => void (e.reasons[1] = { ...e.reasons[1]!, outcome: e.reasons[1]!.outcome === 'pass' ? 'fail' : 'pass' } as SendDecided['reasons'][number])],
    ['a detail null to absent', (e) => void (e.reasons[3] = { rule: e.reasons[3]!.rule, outcome: e.reasons[3]!.outcome } as SendDecided['reasons'][number])],
    ['a member added to a reason', (e) => void (e.reasons[0] = { ...e.reasons[0]!, extra: 1 } as SendDecided['reasons'][number])],
    ['a nested object in a reason', (e) => void (e.reasons[0] = { ...e.reasons[0]!, detail: {} } as unknown as SendDecided['reasons'][number])],
    ['a reason dropped', (e) => void e.reasons.pop()],
  ];
  for (const [what, forge] of forgeries) {
    it(`takes a copy that differs in ${what} for another entry (hashed on its own)`, () => {
      const record = decoded(entry());
      const row = fromLogRow(rowOf(entry()));
      row.reasons = row.reasons.map((r) => ({ ...r }));
      forge(row);
      expect(identicalCopies(record, row)).toBe(false);
      expect(identicalCopies(row, record)).toBe(false);
    });
  }

  it('is never looser than the canonical form: a copy it takes for identical hashes and compares the same', () => {
    const base = entry();
    for (const [, forge] of forgeries) {
      const copy = { ...base, reasons: base.reasons.map((r) => ({ ...r })) };
      forge(copy);
      const same = canonicalJson(chainedFields(copy)) === canonicalJson(chainedFields(base)) && compareDigest(copy, entryHash(copy.prev_hash, copy)) === digests(base).compare;
      if (identicalCopies(base, copy)) expect(same).toBe(true);
    }
  });

  it('sameCopy (the db_event check) still takes a detail null in one copy and absent in the other for the same', () => {
    const a = entry();
    const b = { ...a, reasons: a.reasons.map(({ rule, outcome, detail }) => (detail === null ? { rule, outcome } : { rule, outcome, detail })) } as SendDecided;
    expect(sameCopy(a, b)).toBe(true);
    expect(sameCopy(a, { ...b, recipient: 'x' })).toBe(false);
  });
});

describe('CheckedPolicyLogRow: PolicyLogRow without the copy', () => {
  const row = rowOf(entry());
  const variants: Array<[string, Record<string, unknown>]> = [
    ['a valid row', {}],
    ['a log id as text', { log_id: '1' }],
    ['a log id NaN', { log_id: Number.NaN }],
    ['an unknown decision', { decision: 'maybe' }],
    ['an error code as a number', { error_code: 5 }],
    ['an error text missing', { error_message: undefined }],
    ['reasons not a list', { reasons: {} }],
    ['an invalid date', { decided_at: new Date('x') }],
    ['a date as text', { decided_at: '2026-01-01' }],
    ['no decision event', { decision_event: null }],
    ['a hash missing', { entry_hash: undefined }],
  ];
  for (const [what, change] of variants) {
    it(`gives PolicyLogRow's verdict on ${what}`, () => {
      const value = { ...row, ...change };
      const checked = CheckedPolicyLogRow.parser.safeParse(value);
      expect(checked.success).toBe(PolicyLogRow.safeParse(value).success);
      if (checked.success) expect(checked.data).toBe(value);
    });
  }
  it('selects the columns PolicyLogRow parses', () => {
    expect(CheckedPolicyLogRow.columns).toEqual(Object.keys(PolicyLogRow.shape));
  });
});
