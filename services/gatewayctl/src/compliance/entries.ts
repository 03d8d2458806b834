import { createHash, randomBytes } from 'node:crypto';
import { withTransaction, type PoolClient } from '@gw/db';
import type { RuleOutcome, SendDecided } from '@gw/events';
import { canonicalJson, chainedFields } from '@gw/policy-log';
import { sameJson } from './fingerprint.ts';

/** A policy_log row as the compliance commands read it (decided_at also as epoch ms). */
export interface PolicyLogRow {
  log_id: number;
  command_id: string;
  event_id: string;
  customer_id: string;
  instance_id: string;
  message_id: string;
  recipient: string;
  message_purpose: string;
  message_digest: string;
  decision: 'accepted' | 'rejected';
  error_code: string | null;
  error_message: string | null;
  reasons: RuleOutcome[];
  policy_version: string;
  decided_at: Date;
  occurred_at: number;
  decision_event: SendDecided;
  partition_chain: number;
  prev_hash: string;
  entry_hash: string;
}

export const ROW_COLUMNS = `log_id, command_id, event_id, customer_id, instance_id, message_id, recipient, message_purpose,
  message_digest, decision, error_code, error_message, reasons, policy_version, decided_at,
  round(extract(epoch from decided_at) * 1000)::bigint AS occurred_at, decision_event, partition_chain, prev_hash, entry_hash`;

/**
 * True when Postgres finds the stored decision_event, less the message copy, equal to the row's
 * columns. jsonb equality implies equal canonical JSON in JavaScript (same strings, numerically
 * equal numbers, objects regardless of key order), so a row it passes has nothing differingFields
 * would report; any other row (an extra or missing key too) is compared field by field. One whole
 * comparison reads the stored event once (each ->'field' would unpack it again).
 */
const EVENT_MATCHES_COLUMNS = `(decision_event - 'dispatch') = jsonb_build_object(
  'event_id', event_id, 'correlation_id', command_id, 'occurred_at', round(extract(epoch from decided_at) * 1000)::bigint,
  'customer_id', customer_id, 'instance_id', instance_id, 'message_id', message_id, 'log_id', log_id, 'decision', decision,
  'error_code', error_code, 'error_message', error_message, 'reasons', reasons, 'policy_version', policy_version,
  'recipient', recipient, 'message_purpose', message_purpose, 'message_digest', message_digest,
  'partition_chain', partition_chain, 'prev_hash', prev_hash, 'entry_hash', entry_hash)`;

/**
 * ROW_COLUMNS as verify reads them: decision_event only where Postgres finds it differs from the
 * columns (NULL otherwise: the column itself is NOT NULL), which spares parsing a second copy of
 * every entry; no decided_at (verify works from occurred_at).
 */
export const VERIFY_COLUMNS = `log_id, command_id, event_id, customer_id, instance_id, message_id, recipient, message_purpose,
  message_digest, decision, error_code, error_message, reasons, policy_version,
  round(extract(epoch from decided_at) * 1000)::bigint AS occurred_at,
  CASE WHEN (${EVENT_MATCHES_COLUMNS}) IS TRUE THEN NULL ELSE decision_event END AS decision_event, partition_chain, prev_hash, entry_hash`;

/** The SendDecided entry as the row's columns state it (what queries, exports and show report). */
export function entryFromColumns(row: PolicyLogRow): SendDecided {
  return {
    event_id: row.event_id,
    correlation_id: row.command_id,
    occurred_at: row.occurred_at,
    customer_id: row.customer_id,
    instance_id: row.instance_id,
    message_id: row.message_id,
    log_id: row.log_id,
    decision: row.decision,
    error_code: row.error_code,
    error_message: row.error_message,
    reasons: row.reasons,
    policy_version: row.policy_version,
    recipient: row.recipient,
    message_purpose: row.message_purpose,
    message_digest: row.message_digest,
    dispatch: null,
    partition_chain: row.partition_chain,
    prev_hash: row.prev_hash,
    entry_hash: row.entry_hash,
  };
}

/** Everything of an entry that must agree between copies: the chained fields, the hashes and the error text. */
export function comparable(entry: SendDecided) {
  return { ...chainedFields(entry), error_message: entry.error_message ?? null, prev_hash: entry.prev_hash, entry_hash: entry.entry_hash };
}

export function digestOf(value: unknown): string {
  return createHash('sha256').update(canonicalJson(value)).digest('hex');
}

/** The comparable fields whose values differ between two copies of an entry. */
export function differingFields(a: SendDecided, b: SendDecided): string[] {
  const left = comparable(a) as Record<string, unknown>;
  const right = comparable(b) as Record<string, unknown>;
  return Object.keys(left).filter((key) => !sameJson(left[key], right[key]));
}

/** The decision_event copy the consumer stores: the Kafka record without the message body. */

/**
 * Streams a query's rows in batches through a server-side cursor. Must run inside a transaction
 * (see readSnapshot), so memory stays bounded whatever the size of the log. With `prefetch`, the
 * next batch is asked for before this one is handed over, so the server computes it while the
 * caller works on this one (two batches in memory instead of one).
 */
export async function* cursor<T>(client: PoolClient, sql: string, params: unknown[] = [], batchSize = 1000, prefetch = false): AsyncGenerator<T[]> {
  const name = `compliance_${randomBytes(4).toString('hex')}`;
  await client.query(`DECLARE ${name} NO SCROLL CURSOR FOR ${sql}`, params);
  const fetch = () => client.query<T & object>(`FETCH FORWARD ${batchSize} FROM ${name}`);
  let next: ReturnType<typeof fetch> | null = null;
  try {
    for (;;) {
      const result = await (next ?? fetch());
      next = null;
      if (result.rows.length === 0) return;
      if (prefetch && result.rows.length === batchSize) {
        next = fetch();
        next.catch(() => undefined); // awaited on the next turn, or dropped when the caller stops early
      }
      yield result.rows as T[];
    }
  } finally {
    if (next) await next.catch(() => undefined);
    await client.query(`CLOSE ${name}`).catch(() => undefined);
  }
}

/** A read-only, repeatable-read transaction: one consistent snapshot for a whole export or check. */
export function readSnapshot<T>(pool: { connect(): Promise<PoolClient> }, work: (client: PoolClient) => Promise<T>): Promise<T> {
  return withTransaction(pool, work, 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
}

/** The send's source is not a policy_log column; the first rule (module_enabled) always records it. */
export function sourceOf(reasons: RuleOutcome[]): string | null {
  const module = reasons.find((r) => r.rule === 'module_enabled');
  if (!module?.detail) return null;
  try {
    const detail = JSON.parse(module.detail) as { module?: unknown };
    return typeof detail.module === 'string' ? detail.module : null;
  } catch {
    return null;
  }
}

export function parseDetail(detail: string | null): unknown {
  if (detail === null) return null;
  try {
    return JSON.parse(detail);
  } catch {
    return detail;
  }
}
