import type { Pool } from '@gw/db';
import { fromLogRow, type PolicyLogRow } from '@gw/policy-log';
import { parseDetail, sourceOf } from './entries.ts';

export class NotFound extends Error {}

/** One policy-log entry with its inputs, every rule evaluated, its chain fields and its delivery outcome. */
export async function showEntry(pool: Pool, logId: number) {
  const found = await pool.query<PolicyLogRow>('SELECT * FROM policy_log WHERE log_id = $1', [logId]);
  const row = found.rows[0];
  if (!row) throw new NotFound(`No policy-log entry ${logId}.`);
  const deliveries = await pool.query(
    `SELECT message_id, state, provider_message_id, failure_reason, failure_detail, created_at, updated_at
       FROM deliveries WHERE command_id = $1`,
    [row.command_id],
  );
  return {
    log_id: row.log_id,
    command_id: row.command_id,
    event_id: row.event_id,
    decided_at: new Date(row.decided_at).toISOString(),
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
    deliveries: deliveries.rows.map((d: Record<string, unknown>) => ({
      message_id: d.message_id,
      state: d.state,
      provider_message_id: d.provider_message_id ?? null,
      failure_reason: d.failure_reason ?? null,
      failure_detail: d.failure_detail ?? null,
      created_at: (d.created_at as Date).toISOString(),
      updated_at: (d.updated_at as Date).toISOString(),
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
