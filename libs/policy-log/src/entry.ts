import { z } from '@gw/db';
import type { SendDecided } from '@gw/events';

/**
 * A row of policy_log: the entry's fields under the table's names. The policy-log entry is the
 * SendDecided record; its row keeps the same fields (command_id is its correlation_id, decided_at
 * its occurred_at), the record itself without the message body as decision_event, and no
 * dispatch. This file is the one place that maps between the two: the consumer's batch write and
 * the rebuild insert rows made by toLogRow (Postgres takes them with
 * json_populate_recordset(NULL::policy_log, …), so the column list is the table's own), and
 * verify, show and export read rows back, parsed by the PolicyLogRow schema, with fromLogRow.
 */
export const PolicyLogRow = z.object({
  log_id: z.number(),
  command_id: z.string(),
  event_id: z.string(),
  customer_id: z.string(),
  instance_id: z.string(),
  message_id: z.string(),
  recipient: z.string(),
  message_purpose: z.string(),
  message_digest: z.string(),
  decision: z.enum(['accepted', 'rejected']),
  error_code: z.string().nullable(),
  error_message: z.string().nullable(),
  // jsonb the policy consumer wrote from a SendDecided it encoded: checked for its kind, not field by field.
  reasons: z.custom<SendDecided['reasons']>(Array.isArray),
  policy_version: z.string(),
  decided_at: z.date(),
  decision_event: z.custom<SendDecided>((value) => typeof value === 'object' && value !== null),
  partition_chain: z.number(),
  prev_hash: z.string(),
  entry_hash: z.string(),
});
/** A policy_log row as read back (decided_at a Date). */
export type PolicyLogRow = z.infer<typeof PolicyLogRow>;
/** A policy_log row as written (decided_at in ISO 8601: the row travels as JSON). */
export type NewPolicyLogRow = Omit<PolicyLogRow, 'decided_at'> & { decided_at: string };

/** The policy log keeps a digest of the body, never the body: this is the copy stored in Postgres. */
export function storedCopy(entry: SendDecided): SendDecided {
  return { ...entry, dispatch: entry.dispatch ? { ...entry.dispatch, text: null as unknown as string } : null };
}

export function toLogRow(entry: SendDecided): NewPolicyLogRow {
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
    occurred_at: row.decided_at.getTime(),
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
