import { sql, z, type Queryable } from '@gw/db';
import { fromLogRow, PolicyLogRow } from '@gw/policy-log';
import { parseDetail, POLICY_LOG_COLUMNS, sourceOf } from '@gw/compliance';
import { CliError } from '../action.ts';

/** Meant for the operator: printed as is. */
export class NotFound extends CliError {}

const DeliveryRow = z.object({
  message_id: z.string(),
  state: z.string(),
  provider_message_id: z.string().nullable(),
  failure_reason: z.string().nullable(),
  failure_detail: z.string().nullable(),
  created_at: z.date(),
  updated_at: z.date(),
});

/** One policy-log entry with its inputs, every rule evaluated, its chain fields and its delivery outcome. */
export async function showEntry(pool: Queryable, logId: number) {
  const row = await pool.maybeOne(sql.type(PolicyLogRow)`SELECT ${POLICY_LOG_COLUMNS} FROM policy_log WHERE log_id = ${logId}`);
  if (!row) throw new NotFound(`No policy-log entry ${logId}.`);
  const deliveries = await pool.any(sql.type(DeliveryRow)`
    SELECT message_id, state, provider_message_id, failure_reason, failure_detail, created_at, updated_at
      FROM deliveries WHERE command_id = ${row.command_id}`);
  return {
    log_id: row.log_id,
    command_id: row.command_id,
    event_id: row.event_id,
    decided_at: row.decided_at.toISOString(),
    inputs: {
      customer_id: row.customer_id,
      instance_id: row.instance_id,
      message_id: row.message_id,
      recipient: row.recipient,
      message_purpose: row.message_purpose,
      message_digest: row.message_digest,
      // Not stored as a column: read from the module_enabled rule, which records the send's module.
      source: sourceOf(row.reasons),
      occurred_at: fromLogRow(row).occurred_at,
    },
    rules: row.reasons.map((r) => ({ rule: r.rule, outcome: r.outcome, details: parseDetail(r.detail) })),
    decision: row.decision,
    error_code: row.error_code,
    error_message: row.error_message,
    policy_version: row.policy_version,
    partition_chain: row.partition_chain,
    prev_hash: row.prev_hash,
    entry_hash: row.entry_hash,
    deliveries: deliveries.map((d) => ({
      message_id: d.message_id,
      state: d.state,
      provider_message_id: d.provider_message_id,
      failure_reason: d.failure_reason,
      failure_detail: d.failure_detail,
      created_at: d.created_at.toISOString(),
      updated_at: d.updated_at.toISOString(),
    })),
  };
}

export type ShownEntry = Awaited<ReturnType<typeof showEntry>>;

export function formatEntry(entry: ShownEntry): string {
  const lines: string[] = [];
  const kv = (key: string, value: unknown) => lines.push(`  ${key.padEnd(16)} ${value === null || value === undefined ? '-' : String(value)}`);
  lines.push(`Policy-log entry ${entry.log_id}  ${entry.decision.toUpperCase()}${entry.error_code ? ` (${entry.error_code})` : ''}`);
  kv('decided at', entry.decided_at);
  kv('command', entry.command_id);
  kv('event', entry.event_id);
  kv('policy version', entry.policy_version);
  if (entry.error_message) kv('error message', entry.error_message);
  lines.push('Inputs');
  kv('customer', entry.inputs.customer_id);
  kv('instance', entry.inputs.instance_id);
  kv('message', entry.inputs.message_id);
  kv('recipient', entry.inputs.recipient);
  kv('purpose', entry.inputs.message_purpose);
  kv('body digest', entry.inputs.message_digest);
  kv('source', entry.inputs.source);
  kv('occurred at', `${new Date(entry.inputs.occurred_at).toISOString()} (${entry.inputs.occurred_at})`);
  lines.push('Rules (in evaluation order)');
  for (const rule of entry.rules) lines.push(`  ${rule.outcome.padEnd(7)} ${rule.rule.padEnd(26)} ${rule.details === null ? '' : JSON.stringify(rule.details)}`);
  lines.push('Chain');
  kv('partition', entry.partition_chain);
  kv('prev hash', entry.prev_hash);
  kv('entry hash', entry.entry_hash);
  lines.push('Delivery');
  if (entry.deliveries.length === 0) lines.push('  none');
  for (const d of entry.deliveries) {
    kv('state', d.state);
    if (d.provider_message_id) kv('provider id', d.provider_message_id);
    if (d.failure_reason) kv('failure', `${d.failure_reason}: ${d.failure_detail ?? ''}`);
    kv('updated at', d.updated_at);
  }
  return `${lines.join('\n')}\n`;
}
