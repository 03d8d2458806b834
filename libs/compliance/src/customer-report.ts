// "Verify my log": verify run for one customer (the chains that hold its entries, the replay of its
// own commands), told to that customer. The chains are per Kafka partition and interleave other
// customers' entries, which verify must read to check the links; the report names none of them:
// a divergence is listed (log id, check, field) only when it is about one of the customer's own
// entries, or comes from the replay (which re-runs this customer's commands only). Everything
// else is a count. No detail text goes out: a detail may quote a neighbour's hash or command.
import type { CheckName, Finding } from './copies.ts';
import type { ComplianceDeps } from './deps.ts';
import { runVerify, type VerifyOptions, type VerifyRun } from './verify.ts';

export interface CustomerDivergence {
  log_id: number | null;
  check: CheckName;
  /** The entry's fields the check found wrong, comma-separated; null when the check names none. */
  field: string | null;
  /** What the check found, in plain words. */
  meaning: string;
}

export interface CustomerVerifyReport {
  ok: boolean;
  /** When the check began (its snapshot of the log). */
  checked_at: string;
  customer_id: string;
  summary: string;
  counts: {
    /** The customer's entries in the policy log. */
    entries: number;
    /** The customer's sends decided again by the replay. */
    replayed_decisions: number;
    /** Divergences about the customer's own entries (listed in `divergences`). */
    divergences: number;
    /** Sends not decided yet when the check ran: left out, not divergences. */
    pending_decisions: number;
    /** The chains (one per Kafka partition) that hold the customer's entries. */
    chains: number;
    /** Entries in those chains, the customer's and other customers', every one checked. */
    chain_entries: number;
    /** Problems in those chains that are not about the customer's entries: counted, never shown. */
    other_problems: number;
  };
  divergences: CustomerDivergence[];
  /** The policy versions that decided the customer's entries. */
  policy_versions: string[];
  /** What the two checks are, in plain words. */
  checks: { chain: string; replay: string };
}

/** Divergences from the replay are the customer's whatever their log id: the replay runs this customer's commands only. */
const REPLAY_CHECKS: ReadonlySet<CheckName> = new Set(['replay', 'replay_missing', 'replay_orphan', 'replay_error']);

export const CHECK_MEANINGS: Record<CheckName, string> = {
  db_chain: 'This entry does not link to the entry before it in its chain: an entry was changed, removed or inserted before it.',
  db_hash: 'This entry no longer matches the fingerprint (hash) it was written with: it was changed afterwards.',
  db_event: 'The entry and the copy of the decision stored with it disagree on the field named.',
  db_chain_head: 'The recorded end of the chain does not point at its last entry.',
  kafka_conflict: 'The gateway\'s permanent event log holds two different versions of this entry.',
  kafka_chain: 'In the gateway\'s permanent event log, this entry does not link to the entry before it.',
  kafka_hash: 'In the gateway\'s permanent event log, this entry no longer matches its fingerprint (hash).',
  kafka_vs_db: 'The entry in the policy log and its record in the gateway\'s permanent event log differ on the field named.',
  db_missing: 'The entry is in the gateway\'s permanent event log but missing from the policy log.',
  kafka_missing: 'The entry is in the policy log but missing from the gateway\'s permanent event log.',
  replay: 'Deciding this send again with the same rules and inputs gives a different result than the one recorded.',
  replay_missing: 'One of your send requests was processed, but no decision was recorded for it.',
  replay_orphan: 'A decision was recorded for a send request that the replay did not find.',
  replay_error: 'One of your send requests could not be decided again: the rules failed on it.',
  undecodable: 'A record of the gateway\'s permanent event log cannot be read.',
};

export const CHECKS_EXPLAINED = {
  chain:
    'Chain: every entry of the policy log carries a fingerprint (a SHA-256 hash) of its content and of the entry before it, so the entries form a chain. ' +
    'The check recomputes every fingerprint of the chains that hold your entries, in the policy log and in the gateway\'s permanent event log (Kafka), ' +
    'and compares the two copies. An entry changed, removed or inserted afterwards breaks the chain at that point.',
  replay:
    'Replay: the check takes your send requests and the facts they were decided on (plan, limits, opt-outs) from the permanent event log, ' +
    'decides each send again with the same rules, and compares the result with the decision recorded. The same inputs must give the same decision.',
};

const plural = (n: number, one: string, many = `${one}s`) => `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`;

/** The customer's report of a verify run made with `customerId` (pure: the run's findings sorted into theirs and counts). */
export function customerReport(run: VerifyRun, customerId: string, checkedAt: Date): CustomerVerifyReport {
  const theirs: Finding[] = run.findings.filter((f) => REPLAY_CHECKS.has(f.check) || (f.log_id !== null && run.customer.logIds.has(f.log_id)));
  const others = run.report.divergence_count - theirs.length;
  const c = run.report.counts;
  const counts: CustomerVerifyReport['counts'] = {
    entries: run.customer.entries,
    replayed_decisions: c.decisions_replayed,
    divergences: theirs.length,
    pending_decisions: c.pending_commands,
    chains: c.db_chains,
    chain_entries: c.db_rows,
    other_problems: others,
  };
  return {
    ok: run.report.ok,
    checked_at: checkedAt.toISOString(),
    customer_id: customerId,
    summary: summaryOf(run.report.ok, counts),
    counts,
    divergences: theirs.map((f) => ({ log_id: f.log_id, check: f.check, field: f.fields.length > 0 ? f.fields.join(', ') : null, meaning: CHECK_MEANINGS[f.check] })),
    policy_versions: [...run.customer.policyVersions].sort(),
    checks: CHECKS_EXPLAINED,
  };
}

function summaryOf(ok: boolean, counts: CustomerVerifyReport['counts']): string {
  const pending = counts.pending_decisions > 0 ? ` ${plural(counts.pending_decisions, 'send')} still waiting for a decision when the check ran ${counts.pending_decisions === 1 ? 'was' : 'were'} left out.` : '';
  if (ok && counts.entries === 0 && counts.replayed_decisions === 0) return `Your organisation has no entries in the policy log yet: there was nothing to check.${pending}`;
  if (ok) {
    return (
      `Your policy log checks out. All ${plural(counts.entries, 'entry', 'entries')} are unchanged, and the chain is intact through your entries ` +
      `(${plural(counts.chain_entries, 'entry', 'entries')} checked in ${plural(counts.chains, 'chain')}). ` +
      `Deciding your ${plural(counts.replayed_decisions, 'send')} again gave the same decisions as recorded.${pending}`
    );
  }
  if (counts.divergences > 0) {
    const elsewhere = counts.other_problems > 0 ? ` The same chains also have ${plural(counts.other_problems, 'problem')} in entries that are not yours (not shown).` : '';
    return (
      `Problems found: ${plural(counts.divergences, 'problem')} in your entries, listed below with the log id, the check and the field. ` +
      `Your policy log does not match what was decided and recorded at the time.${elsewhere} Contact the gateway's operator with this report.${pending}`
    );
  }
  return (
    `Your own entries check out, but the chain through them is not intact: the chains that hold your entries have ${plural(counts.other_problems, 'problem')} ` +
    `in entries that are not yours (not shown, as they belong to others). Contact the gateway's operator with this report.${pending}`
  );
}

/** Runs verify for one customer and returns that customer's report. */
export async function verifyCustomerLog(deps: ComplianceDeps, customerId: string, options: Omit<VerifyOptions, 'customerId'> = {}): Promise<CustomerVerifyReport> {
  const started = new Date();
  const run = await runVerify(deps, { ...options, customerId });
  return customerReport(run, customerId, started);
}
