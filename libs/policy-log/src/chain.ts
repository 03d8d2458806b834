import { createHash } from 'node:crypto';
import stringify from 'safe-stable-stringify';
import type { SendDecided } from '@gw/events';

/** The chain starts from this value in every partition. */
export const GENESIS_HASH = '0'.repeat(64);

/**
 * Deterministic JSON: JSON.stringify's text with object keys sorted at every level (by UTF-16
 * code units; undefined members left out), so the same entry always hashes the same. The hashes
 * of every log ever written depend on this text: a test pins it.
 */
export function canonicalJson(value: unknown): string {
  return stringify(value) ?? 'undefined';
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
