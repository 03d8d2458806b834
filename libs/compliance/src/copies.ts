// What verify checks and finds, and how an entry's copies (the Postgres row, the decisions
// record, the stored decision_event) are compared.
import type { SendDecided } from '@gw/events';
import { canonicalJson, chainedFields, entryHash } from '@gw/policy-log';
import { digestOf } from './replay.ts';

export type CheckName =
  | 'db_chain' // prev_hash is not the previous row's entry_hash in its partition chain
  | 'db_hash' // entry_hash does not match the row's columns
  | 'db_event' // the stored decision_event disagrees with the row's columns
  | 'db_chain_head' // policy_chain does not point at the last row of the chain
  | 'kafka_conflict' // two records for one log_id with different content, or one command decided twice
  | 'kafka_chain' // chain break among the records on the decisions topic
  | 'kafka_hash' // a record's entry_hash does not match its content
  | 'kafka_vs_db' // the record on Kafka and the Postgres row differ
  | 'db_missing' // on Kafka, not in Postgres
  | 'kafka_missing' // in Postgres, not on Kafka (for a command the consumer has committed)
  | 'replay' // re-running the decider gives a different entry
  | 'replay_missing' // a processed command with no recorded decision
  | 'replay_orphan' // a recorded decision with no command on customer-events
  | 'replay_error' // the engine threw on the record
  | 'undecodable'; // a decisions record that cannot be decoded

export interface Divergence {
  log_id: number | null;
  check: CheckName;
  detail: string;
}

/**
 * A divergence as the passes find it: also the fields of the entry it is about (the columns that
 * differ between two copies, or the chain field that does not hold), for reports that name a
 * field but not the text of `detail` (the customer's report: a detail may quote a neighbour's hash).
 */
export interface Finding extends Divergence {
  fields: string[];
}

/** The divergences found: all counted, the first `max` kept. */
export class Findings {
  readonly kept: Finding[] = [];
  count = 0;
  constructor(private readonly max: number) {}
  report(log_id: number | null, check: CheckName, detail: string, fields: string[] = []): void {
    this.count++;
    if (this.kept.length < this.max) this.kept.push({ log_id, check, detail, fields });
  }

  /** Adds what another pass found (its kept divergences, and how many it counted). */
  merge(kept: Finding[], count: number): void {
    for (const { log_id, check, detail, fields } of kept) this.report(log_id, check, detail, fields);
    this.count += count - kept.length;
  }
}

/** Everything of an entry that must agree between its copies (row and record): the chained fields, the hashes and the error text. */
export const comparable = (entry: SendDecided) => ({ ...chainedFields(entry), error_message: entry.error_message ?? null, prev_hash: entry.prev_hash, entry_hash: entry.entry_hash });

/**
 * One copy's hash recomputed from its content, and the digest by which two copies are compared.
 * The recomputed hash already covers the chained fields and prev_hash, so the comparison digest
 * adds only what it does not (the stored hash, the error text): each copy is serialized once.
 */
export function digests(entry: SendDecided): { recomputed: string; compare: string } {
  const recomputed = entryHash(entry.prev_hash, entry);
  return { recomputed, compare: digestOf([recomputed, entry.entry_hash, entry.error_message ?? null]) };
}

/** Whether two copies agree on everything comparable: each field by value, the reasons rule by rule. */
export function sameCopy(a: SendDecided, b: SendDecided): boolean {
  const x = comparable(a);
  const y = comparable(b);
  for (const key of Object.keys(x) as Array<keyof typeof x>) {
    if (key !== 'reasons' && x[key] !== y[key]) return false;
  }
  return x.reasons.length === y.reasons.length && x.reasons.every((r, i) => r.rule === y.reasons[i]!.rule && r.outcome === y.reasons[i]!.outcome && (r.detail ?? null) === (y.reasons[i]!.detail ?? null));
}

/** The fields two copies disagree on (to say what differs, once they are known to). */
export function differingFields(a: Record<string, unknown>, b: Record<string, unknown>): string[] {
  return [...new Set([...Object.keys(a), ...Object.keys(b)])].filter((k) => canonicalJson(a[k]) !== canonicalJson(b[k]));
}
