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
  return { recomputed, compare: compareDigest(entry, recomputed) };
}

/** The comparison digest of a copy whose hash was already recomputed (see digests). */
export const compareDigest = (entry: SendDecided, recomputed: string): string => digestOf([recomputed, entry.entry_hash, entry.error_message ?? null]);

/** The chained fields but the reasons, as SendDecided names them (command_id is correlation_id). */
const SCALARS = ['log_id', 'event_id', 'correlation_id', 'customer_id', 'instance_id', 'message_id', 'recipient', 'message_purpose', 'message_digest', 'decision', 'error_code', 'policy_version', 'occurred_at', 'partition_chain', 'prev_hash', 'entry_hash'] as const;

/**
 * Whether two copies are the same entry to the letter: every comparable field strictly equal, the
 * reasons member by member. Stricter than sameCopy (a detail null in one and absent in the other
 * differs here), so that two identical copies have the same canonical form: the hash recomputed
 * from one is the other's, and their comparison digests are equal. Verify hashes a record that is
 * identical to its row once, not once per copy; a copy that is not identical takes the full path
 * (its own hash and digest). No object or string is built: this runs for every entry.
 */
export function identicalCopies(a: SendDecided, b: SendDecided): boolean {
  for (const key of SCALARS) if (a[key] !== b[key]) return false;
  if ((a.error_message ?? null) !== (b.error_message ?? null)) return false;
  const x = a.reasons;
  const y = b.reasons;
  if (!Array.isArray(x) || !Array.isArray(y) || x.length !== y.length) return false;
  for (let i = 0; i < x.length; i++) {
    const r = x[i] as unknown as Record<string, unknown>;
    const s = y[i] as unknown as Record<string, unknown>;
    if (typeof r !== 'object' || r === null || typeof s !== 'object' || s === null) return false;
    if (!sameMembers(r, s)) return false;
  }
  return true;
}

/**
 * Whether two objects have the same canonical JSON members: own enumerable members, the undefined
 * ones left out (as canonical JSON leaves them out), strictly equal. A decoded record is an
 * instance whose prototype has enumerable methods (avsc): Object.keys lists its own members, and
 * is several times faster on it than a for-in that skips the prototype's. Values are compared by
 * identity, so a nested object (none today) is never taken for equal.
 */
function sameMembers(r: Record<string, unknown>, s: Record<string, unknown>): boolean {
  const ownR = Object.keys(r);
  const ownS = Object.keys(s);
  let defined = 0;
  for (let i = 0; i < ownR.length; i++) {
    const value = r[ownR[i]!];
    if (value === undefined) continue;
    if (value !== s[ownR[i]!] || !Object.hasOwn(s, ownR[i]!) || (typeof value === 'object' && value !== null)) return false;
    defined++;
  }
  for (let i = 0; i < ownS.length; i++) if (s[ownS[i]!] !== undefined) defined--;
  return defined === 0;
}

/** Whether two copies agree on everything comparable: each field by value, the reasons rule by rule. */
export function sameCopy(a: SendDecided, b: SendDecided): boolean {
  for (const key of SCALARS) if (a[key] !== b[key]) return false;
  if ((a.error_message ?? null) !== (b.error_message ?? null)) return false;
  const x = a.reasons;
  const y = b.reasons;
  if (x.length !== y.length) return false;
  for (let i = 0; i < x.length; i++) {
    const r = x[i]!;
    const s = y[i]!;
    if (r.rule !== s.rule || r.outcome !== s.outcome || (r.detail ?? null) !== (s.detail ?? null)) return false;
  }
  return true;
}

/** The fields two copies disagree on (to say what differs, once they are known to). */
export function differingFields(a: Record<string, unknown>, b: Record<string, unknown>): string[] {
  return [...new Set([...Object.keys(a), ...Object.keys(b)])].filter((k) => canonicalJson(a[k]) !== canonicalJson(b[k]));
}
