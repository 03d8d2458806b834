// Fast paths for the per-entry work of verify: the canonical JSON of an entry's chained fields
// written out for its fixed shape (byte for byte what canonicalJson(chainedFields(entry)) gives,
// with canonicalJson itself for any shape it does not expect), digests that compare copies of an
// entry without keeping their text, and an equality that only canonicalises values that differ.
import * as crypto from 'node:crypto';
import type { RuleOutcome, SendDecided, SendRequested } from '@gw/events';
import { detailsJson, type PolicyDecision } from '@gw/policy';
import { canonicalJson, chainedFields } from '@gw/policy-log';

// One-shot hashing (Node >= 20.12) skips a Hash object per call, which is most of the cost of
// hashing a short string; older Node falls back to createHash (same digests).
const oneShot = (crypto as { hash?: (algorithm: string, data: string, encoding: 'hex' | 'base64') => string }).hash;
const sha256Of = (text: string, encoding: 'hex' | 'base64'): string =>
  oneShot ? oneShot('sha256', text, encoding) : crypto.createHash('sha256').update(text).digest(encoding);

const str = JSON.stringify;

/** A value canonicalJson writes as JSON.stringify does (no object inside). */
const isPlain = (v: unknown) => v === null || (typeof v !== 'object' && v !== undefined);

function reasonsJson(reasons: unknown): string | null {
  if (!Array.isArray(reasons)) return null;
  let out = '[';
  for (let i = 0; i < reasons.length; i++) {
    const r = reasons[i] as RuleOutcome | null;
    if (r === null || typeof r !== 'object' || Array.isArray(r)) return null;
    // Own keys among rule, outcome and detail; an undefined detail is left out, as canonicalJson does.
    const keys = Object.keys(r);
    for (const k of keys) if (k !== 'rule' && k !== 'outcome' && k !== 'detail') return null;
    if (!keys.includes('rule') || !keys.includes('outcome')) return null;
    const { rule, outcome, detail } = r;
    if (typeof rule !== 'string' || typeof outcome !== 'string' || !(detail === undefined || detail === null || typeof detail === 'string')) return null;
    if (i > 0) out += ',';
    out += detail === undefined ? `{"outcome":${str(outcome)},"rule":${str(rule)}}` : `{"detail":${str(detail)},"outcome":${str(outcome)},"rule":${str(rule)}}`;
  }
  return `${out}]`;
}

/** canonicalJson(chainedFields(entry)), written out directly for the usual shape. */
export function chainedJson(entry: SendDecided): string {
  const f = chainedFields(entry);
  const reasons = reasonsJson(f.reasons);
  if (
    reasons === null ||
    !isPlain(f.command_id) || !isPlain(f.customer_id) || !isPlain(f.decision) || !isPlain(f.error_code) || !isPlain(f.event_id) ||
    !isPlain(f.instance_id) || !isPlain(f.log_id) || !isPlain(f.message_digest) || !isPlain(f.message_id) || !isPlain(f.message_purpose) ||
    !isPlain(f.occurred_at) || !isPlain(f.partition_chain) || !isPlain(f.policy_version) || !isPlain(f.recipient)
  ) {
    return canonicalJson(f);
  }
  // Keys in sorted order, as canonicalJson writes them.
  return (
    `{"command_id":${str(f.command_id)},"customer_id":${str(f.customer_id)},"decision":${str(f.decision)},"error_code":${str(f.error_code)},` +
    `"event_id":${str(f.event_id)},"instance_id":${str(f.instance_id)},"log_id":${str(f.log_id)},"message_digest":${str(f.message_digest)},` +
    `"message_id":${str(f.message_id)},"message_purpose":${str(f.message_purpose)},"occurred_at":${str(f.occurred_at)},` +
    `"partition_chain":${str(f.partition_chain)},"policy_version":${str(f.policy_version)},"reasons":${reasons},"recipient":${str(f.recipient)}}`
  );
}

const sha256 = (text: string) => sha256Of(text, 'base64');

/** entryHash(prevHash, entry) from the entry's chained JSON. */
export function hashOf(prevHash: string, chained: string): string {
  return sha256Of(`${prevHash}\n${chained}`, 'hex');
}

/**
 * A digest of comparable(entry) (the chained fields, the hashes, the error text): two copies of an
 * entry have the same one exactly when their comparable fields are equal. The chained fields and
 * prev_hash enter through the entry's recomputed hash (hashOf(prev_hash, chained)), which is
 * SHA-256 over exactly them; each other part is JSON, so joining them is unambiguous.
 */
export function compareDigest(entry: SendDecided, recomputedHash: string): string {
  return sha256(`${recomputedHash}\n${str(entry.error_message ?? null)}\n${str(entry.prev_hash)}\n${str(entry.entry_hash)}`);
}

const COVERED = new Set([
  'event_id', 'correlation_id', 'occurred_at', 'customer_id', 'instance_id', 'message_id', 'log_id', 'decision', 'error_code', 'error_message',
  'reasons', 'policy_version', 'recipient', 'message_purpose', 'message_digest', 'partition_chain', 'prev_hash', 'entry_hash',
]);

/**
 * A digest of the whole record (what digestOf(entry) tells apart): the comparable digest, plus the
 * message body and anything else the record carries.
 */
export function recordDigest(entry: SendDecided, compare: string): string {
  const rest: Record<string, unknown> = {};
  for (const key of Object.keys(entry)) if (!COVERED.has(key)) rest[key] = (entry as unknown as Record<string, unknown>)[key];
  // error_message is compared as `?? null` above; undefined and null are different records.
  if (entry.error_message === undefined) rest.error_message_undefined = true;
  return sha256(`${compare}\n${canonicalJson(rest)}`);
}

/** What a re-run of the decider must reproduce (replayFields), as a digest. */
export function replayDigest(fields: Record<string, unknown>): string {
  return sha256(canonicalJsonFast(fields));
}

// Stands in for a missing value, which canonicalJson tells apart from null (JSON.stringify would not).
const MISSING = { '\u0000missing': true };
const orMissing = (value: unknown) => (value === undefined ? MISSING : value);

/**
 * One value as a self-delimiting token: a string as itself (with its length), anything else as
 * its JSON (undefined as null, as JSON.stringify writes it inside an array). Two values get the
 * same token exactly when they have the same JSON, for the values entries hold (strings, numbers,
 * null, MISSING), provided no string holds a lone surrogate (UTF-8 would write every one of them
 * as U+FFFD): replay texts with a surrogate are digested from their JSON instead (see below).
 */
function token(value: unknown): string {
  if (typeof value === 'string') return `s${value.length}:${value}`;
  const json = JSON.stringify(value) ?? 'null';
  return `j${json.length}:${json}`;
}

const SURROGATE = /[\ud800-\udfff]/;

/**
 * replayFields(entry) as a digest: the values in a fixed order (the positions name the fields, so
 * no keys need sorting), each as a token, the reasons as their count and three tokens each. The
 * replayed and the recorded entry get the same digest exactly when their replayFields are equal.
 * Tokens spare escaping every detail text a second time, which writing the values as one JSON
 * array costs (that array is still the form when a string holds a surrogate: the 'J' prefix keeps
 * the two forms apart). Both sides of the comparison must use this function, or
 * replayDigestOfDecision, which writes the same text for an entry it has not built.
 */
export function replayDigestOf(entry: SendDecided): string {
  let text =
    token(orMissing(entry.correlation_id)) + token(orMissing(entry.customer_id)) + token(orMissing(entry.instance_id)) + token(orMissing(entry.message_id)) +
    token(orMissing(entry.occurred_at)) + token(orMissing(entry.recipient)) + token(orMissing(entry.message_purpose)) + token(orMissing(entry.message_digest)) +
    token(orMissing(entry.decision)) + token(entry.error_code ?? null) + token(entry.error_message ?? null);
  const reasons: unknown = entry.reasons;
  if (Array.isArray(reasons)) {
    text += `r${reasons.length}:`;
    for (const r of reasons as Array<Partial<RuleOutcome> | null | undefined>) text += token(orMissing(r?.rule)) + token(orMissing(r?.outcome)) + token(r?.detail ?? null);
  } else {
    text += token(orMissing(reasons));
  }
  text += token(orMissing(entry.policy_version)) + token(orMissing(entry.partition_chain));
  return SURROGATE.test(text) ? sha256(`J${legacyReplayJson(entry)}`) : sha256(text);
}

/**
 * replayDigestOf(toDecidedEvent(command, decision, -1, policyVersion, digest) placed in `partition`),
 * without building the entry: the replay needs only the digest of what it decided (no event id,
 * no dispatch copy). Writes the same text from the same values: each reason's detail is the text
 * toDecidedEvent records (detailsJson). The pieces that repeat from one decision to the next (a
 * rule's name and outcome, a constant detail, the policy version) are written once and remembered
 * with whether they hold a surrogate, so only the pieces that vary are written and scanned.
 */
export function replayDigestOfDecision(command: SendRequested, decision: PolicyDecision, digest: string, policyVersion: string, partition: number): string {
  const rejected = decision.decision === 'rejected';
  const head =
    token(orMissing(command.correlation_id)) + token(orMissing(command.customer_id)) + token(orMissing(command.instance_id)) + token(orMissing(command.message_id)) +
    token(orMissing(command.occurred_at)) + token(orMissing(command.phone)) + token(orMissing(command.message_purpose)) + token(orMissing(digest));
  const verdict = constantPiece(decision.decision);
  let surrogate = verdict.surrogate;
  let text = head + verdict.text + (rejected ? token(decision.code ?? null) + token(decision.message ?? null) : NULL_TOKENS);
  // Every piece that varies is scanned for surrogates once, together; remembered pieces know already.
  let varying = rejected ? head + String(decision.code) + String(decision.message) : head;
  const rules = decision.rules;
  text += `r${rules.length}:`;
  for (const r of rules) {
    const named = ruleTokens(r.rule, r.outcome);
    text += named.text;
    surrogate ||= named.surrogate;
    const details = rejected && r.outcome === 'fail' ? decision.details : r.details;
    if (!details) text += NULL_PIECE.text;
    else if (Object.isFrozen(details)) {
      const constant = constantDetail(details);
      text += constant.text;
      surrogate ||= constant.surrogate;
    } else {
      const written = detailsJson(details);
      text += token(written);
      varying += written;
    }
  }
  const version = constantPiece(policyVersion);
  text += version.text + token(orMissing(partition));
  surrogate ||= version.surrogate || SURROGATE.test(varying);
  if (!surrogate) return sha256(text);
  return sha256(
    `J${JSON.stringify([
      orMissing(command.correlation_id), orMissing(command.customer_id), orMissing(command.instance_id), orMissing(command.message_id), orMissing(command.occurred_at),
      orMissing(command.phone), orMissing(command.message_purpose), orMissing(digest), orMissing(decision.decision),
      (rejected ? decision.code : null) ?? null, (rejected ? decision.message : null) ?? null,
      rules.map((r) => [orMissing(r.rule), orMissing(r.outcome), detailOf(decision, r) ?? null]), orMissing(policyVersion), orMissing(partition),
    ])}`,
  );
}

/** A token of the digest text, and whether it holds a surrogate. */
interface Piece {
  text: string;
  surrogate: boolean;
}

const pieceOf = (value: unknown): Piece => {
  const text = token(value);
  return { text, surrogate: SURROGATE.test(text) };
};
const NULL_PIECE = pieceOf(null);
const NULL_TOKENS = token(null) + token(null);

// Memos of pure functions of their keys; bounded, since a long replay may meet many versions.
const MEMO_LIMIT = 4096;
const constants = new Map<unknown, Piece>();
const named = new Map<unknown, Map<unknown, Piece>>();
const constantDetailTexts = new WeakMap<object, Piece>();

/** token(orMissing(value)) for a value that repeats (the policy version). */
function constantPiece(value: unknown): Piece {
  let piece = constants.get(value);
  if (piece === undefined) {
    if (constants.size >= MEMO_LIMIT) constants.clear();
    constants.set(value, (piece = pieceOf(orMissing(value))));
  }
  return piece;
}

/** token(orMissing(rule)) + token(orMissing(outcome)): a handful of pairs in all. */
function ruleTokens(rule: unknown, outcome: unknown): Piece {
  let byOutcome = named.get(rule);
  if (byOutcome === undefined) {
    if (named.size >= MEMO_LIMIT) named.clear();
    named.set(rule, (byOutcome = new Map()));
  }
  let piece = byOutcome.get(outcome);
  if (piece === undefined) {
    const text = token(orMissing(rule)) + token(orMissing(outcome));
    byOutcome.set(outcome, (piece = { text, surrogate: SURROGATE.test(text) }));
  }
  return piece;
}

/** token(detailsJson(details)) of a frozen details object, which cannot change: remembered (as detailsJson remembers its text). */
function constantDetail(details: Record<string, unknown>): Piece {
  let piece = constantDetailTexts.get(details);
  if (piece === undefined) constantDetailTexts.set(details, (piece = pieceOf(detailsJson(details))));
  return piece;
}

/** The detail text toDecidedEvent records for a rule of a decision. */
const detailOf = (decision: PolicyDecision, r: PolicyDecision['rules'][number]): string | null =>
  decision.decision === 'rejected' && r.outcome === 'fail' ? detailsJson(decision.details) : r.details ? detailsJson(r.details) : null;

/** The replay fields as one JSON array (the digested form when a value holds a surrogate). */
function legacyReplayJson(entry: SendDecided): string {
  const reasons = Array.isArray(entry.reasons) ? entry.reasons.map((r) => [orMissing(r?.rule), orMissing(r?.outcome), r?.detail ?? null]) : orMissing(entry.reasons);
  return JSON.stringify([
    orMissing(entry.correlation_id), orMissing(entry.customer_id), orMissing(entry.instance_id), orMissing(entry.message_id), orMissing(entry.occurred_at),
    orMissing(entry.recipient), orMissing(entry.message_purpose), orMissing(entry.message_digest), orMissing(entry.decision),
    entry.error_code ?? null, entry.error_message ?? null, reasons, orMissing(entry.policy_version), orMissing(entry.partition_chain),
  ]);
}

/** canonicalJson(value) for a flat object (values plain, or rule outcomes), written out directly; canonicalJson for anything nested deeper. */
export function canonicalJsonFast(value: Record<string, unknown>): string {
  const keys = Object.keys(value).sort();
  let out = '{';
  let first = true;
  for (const key of keys) {
    const v = value[key];
    if (v === undefined) continue;
    out += `${first ? '' : ','}${str(key)}:${isPlain(v) ? str(v) : (reasonsJson(v) ?? canonicalJson(v))}`;
    first = false;
  }
  return `${out}}`;
}

/** canonicalJson(a) === canonicalJson(b), without writing either out when they are plainly equal. */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b) && a.length === b.length) {
    let plainlyEqual = true;
    for (let i = 0; i < a.length && plainlyEqual; i++) plainlyEqual = sameFlatObject(a[i], b[i]);
    if (plainlyEqual) return true;
  }
  return canonicalJson(a) === canonicalJson(b);
}

/** True only when both are objects with the same own keys and strictly equal plain values. */
function sameFlatObject(a: unknown, b: unknown): boolean {
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  const ka = Object.keys(a as object);
  const kb = Object.keys(b as object);
  if (ka.length !== kb.length) return false;
  for (const k of ka) {
    const va = (a as Record<string, unknown>)[k];
    if (!isPlain(va) || va !== (b as Record<string, unknown>)[k] || !Object.prototype.hasOwnProperty.call(b, k)) return false;
  }
  return true;
}
