import type { SendDecided } from '@gw/events';

/**
 * A row of policy_log: the entry's fields under the table's names. The policy-log entry is the
 * SendDecided record; its row keeps the same fields (command_id is its correlation_id, decided_at
 * its occurred_at), the record itself without the message body as decision_event, and no
 * dispatch. This file is the one place that maps between the two: the consumer's batch write and
 * the rebuild insert rows made by toLogRow (Postgres takes them with
 * json_populate_recordset(NULL::policy_log, …), so the column list is the table's own), and
 * verify, show and export read rows back with fromLogRow.
 */
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
  decision: SendDecided['decision'];
  error_code: string | null;
  error_message: string | null;
  reasons: SendDecided['reasons'];
  policy_version: string;
  /** timestamptz: ISO 8601 written, a Date read back. */
  decided_at: string | Date;
  decision_event: SendDecided;
  partition_chain: number;
  prev_hash: string;
  entry_hash: string;
}

/** The policy log keeps a digest of the body, never the body: this is the copy stored in Postgres. */
export function storedCopy(entry: SendDecided): SendDecided {
  return { ...entry, dispatch: entry.dispatch ? { ...entry.dispatch, text: null as unknown as string } : null };
}

export function toLogRow(entry: SendDecided): PolicyLogRow {
  return {
    log_id: entry.log_id,
    command_id: entry.correlation_id,
    event_id: entry.event_id,
    customer_id: entry.customer_id,
    instance_id: entry.instance_id,
    message_id: entry.message_id,
    recipient: entry.recipient,
    message_purpose: entry.message_purpose,
    message_digest: entry.message_digest,
    decision: entry.decision,
    error_code: entry.error_code ?? null,
    error_message: entry.error_message ?? null,
    reasons: entry.reasons,
    policy_version: entry.policy_version,
    decided_at: new Date(entry.occurred_at).toISOString(),
    decision_event: storedCopy(entry),
    partition_chain: entry.partition_chain,
    prev_hash: entry.prev_hash,
    entry_hash: entry.entry_hash,
  };
}

/** The entry as the row's columns state it (no dispatch: the log keeps no body). */
export function fromLogRow(row: PolicyLogRow): SendDecided {
  return {
    event_id: row.event_id,
    correlation_id: row.command_id,
    occurred_at: new Date(row.decided_at).getTime(),
    customer_id: row.customer_id,
    instance_id: row.instance_id,
    message_id: row.message_id,
    log_id: Number(row.log_id),
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
