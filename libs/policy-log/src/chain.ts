import { createHash } from 'node:crypto';
import type { SendDecided } from '@gw/events';

/** The chain starts from this value in every partition. */
export const GENESIS_HASH = '0'.repeat(64);

/** Deterministic JSON: object keys sorted at every level, so the same entry always hashes the same. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
}

/** The fields of a policy-log entry that the chain protects (everything but the hashes and the body). */
export function chainedFields(entry: SendDecided) {
  return {
    log_id: entry.log_id,
    event_id: entry.event_id,
    command_id: entry.correlation_id,
    customer_id: entry.customer_id,
    instance_id: entry.instance_id,
    message_id: entry.message_id,
    recipient: entry.recipient,
    message_purpose: entry.message_purpose,
    message_digest: entry.message_digest,
    decision: entry.decision,
    error_code: entry.error_code,
    reasons: entry.reasons,
    policy_version: entry.policy_version,
    occurred_at: entry.occurred_at,
    partition_chain: entry.partition_chain,
  };
}

/** entry_hash = SHA-256(prev_hash + "\n" + canonical JSON of the chained fields). */
export function entryHash(prevHash: string, entry: SendDecided): string {
  return createHash('sha256').update(`${prevHash}\n${canonicalJson(chainedFields(entry))}`).digest('hex');
}
