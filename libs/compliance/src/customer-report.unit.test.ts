import { describe, expect, it } from 'vitest';
import type { Finding } from './copies.ts';
import { CHECK_MEANINGS, customerReport } from './customer-report.ts';
import type { VerifyRun } from './verify.ts';

// A verify run for customer cus_me, whose entries (log ids 1 and 3) share a chain with cus_other's
// (log ids 2 and 4): the customer's report lists only what is about its own entries or its replay.
const AT = new Date('2026-03-01T10:00:00.000Z');

function run(findings: Finding[], overrides: Partial<VerifyRun['report']['counts']> = {}): VerifyRun {
  return {
    report: {
      ok: findings.length === 0,
      customer_id: 'cus_me',
      divergence_count: findings.length,
      divergences: findings.map(({ log_id, check, detail }) => ({ log_id, check, detail })),
      counts: {
        db_rows: 4,
        db_chains: 1,
        kafka_decisions: 4,
        kafka_duplicates: 0,
        customer_events: 5,
        decisions_replayed: 2,
        duplicate_commands: 0,
        pending_commands: 0,
        undecodable_customer_events: 0,
        dead_lettered_customer_events: 0,
        ...overrides,
      },
      events: 13,
      elapsed_ms: 10,
      events_per_second: 1300,
    },
    findings,
    customer: { logIds: new Set([1, 3]), entries: 2, policyVersions: new Set(['v2', 'v1']) },
  };
}

const finding = (log_id: number | null, check: Finding['check'], detail: string, fields: string[] = []): Finding => ({ log_id, check, detail, fields });

describe('the customer\'s verify report', () => {
  it('says ok with counts, the policy versions and what the checks are, on a clean run', () => {
    const report = customerReport(run([]), 'cus_me', AT);
    expect(report).toMatchObject({
      ok: true,
      checked_at: '2026-03-01T10:00:00.000Z',
      customer_id: 'cus_me',
      counts: { entries: 2, replayed_decisions: 2, divergences: 0, pending_decisions: 0, chains: 1, chain_entries: 4, other_problems: 0 },
      divergences: [],
      policy_versions: ['v1', 'v2'],
    });
    expect(report.summary).toMatch(/^Your policy log checks out\. All 2 entries are unchanged, and the chain is intact through your entries/);
    expect(report.checks.chain).toMatch(/^Chain:/);
    expect(report.checks.replay).toMatch(/^Replay:/);
  });

  it('lists a divergence of its own entry with the check, the field and its meaning, never the detail', () => {
    const report = customerReport(run([finding(3, 'db_event', 'decision_event disagrees with the columns on recipient', ['recipient']), finding(3, 'db_hash', 'entry_hash abc… does not match', ['entry_hash'])]), 'cus_me', AT);
    expect(report.ok).toBe(false);
    expect(report.divergences).toEqual([
      { log_id: 3, check: 'db_event', field: 'recipient', meaning: CHECK_MEANINGS.db_event },
      { log_id: 3, check: 'db_hash', field: 'entry_hash', meaning: CHECK_MEANINGS.db_hash },
    ]);
    expect(report.counts).toMatchObject({ divergences: 2, other_problems: 0 });
    expect(JSON.stringify(report)).not.toMatch(/disagrees|abc…/);
    expect(report.summary).toMatch(/^Problems found: 2 problems in your entries/);
  });

  it('counts, but never names, a problem in another customer\'s entry of the same chain', () => {
    const report = customerReport(
      run([
        finding(2, 'db_event', 'decision_event disagrees with the columns on recipient', ['recipient']),
        finding(4, 'db_chain', 'prev_hash 1234… is not the previous entry\'s hash', ['prev_hash']),
        finding(null, 'undecodable', 'decisions record 0@7: bad magic byte'),
      ]),
      'cus_me',
      AT,
    );
    expect(report.ok).toBe(false);
    expect(report.divergences).toEqual([]);
    expect(report.counts).toMatchObject({ divergences: 0, other_problems: 3 });
    expect(JSON.stringify(report)).not.toMatch(/"log_id":\s*[24]\b|1234|magic/);
    expect(report.summary).toMatch(/^Your own entries check out, but the chain through them is not intact: .* 3 problems in entries that are not yours/);
  });

  it('keeps what the replay found (it re-ran this customer\'s commands only), with or without a log id', () => {
    const report = customerReport(
      run([finding(null, 'replay_missing', 'command cmd_1 (0@4, customer cus_me) was consumed but has no decision'), finding(1, 'replay', 'recorded accepted, replay rejected/recipient_suppressed; differing fields: decision', ['decision', 'error_code']), finding(2, 'kafka_vs_db', 'differ on recipient', ['recipient'])]),
      'cus_me',
      AT,
    );
    expect(report.divergences).toEqual([
      { log_id: null, check: 'replay_missing', field: null, meaning: CHECK_MEANINGS.replay_missing },
      { log_id: 1, check: 'replay', field: 'decision, error_code', meaning: CHECK_MEANINGS.replay },
    ]);
    expect(report.counts).toMatchObject({ divergences: 2, other_problems: 1 });
    expect(report.summary).toMatch(/The same chains also have 1 problem in entries that are not yours \(not shown\)/);
  });

  it('says when there was nothing to check, and when sends were still waiting for a decision', () => {
    const empty = customerReport({ ...run([], { db_rows: 0, db_chains: 0, decisions_replayed: 0, pending_commands: 1 }), customer: { logIds: new Set(), entries: 0, policyVersions: new Set() } }, 'cus_me', AT);
    expect(empty.ok).toBe(true);
    expect(empty.summary).toBe('Your organisation has no entries in the policy log yet: there was nothing to check. 1 send still waiting for a decision when the check ran was left out.');
    expect(empty.policy_versions).toEqual([]);
  });
});
