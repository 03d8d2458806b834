// policy-log verify, as the operator reads it: the checks themselves are @gw/compliance's (the
// dashboard's "verify my log" runs the same ones); this prints their report.
import type { VerifyReport } from '@gw/compliance';

export function formatVerifyReport(report: VerifyReport): string {
  const c = report.counts;
  const lines = [
    `Policy log verification${report.customer_id ? ` (customer ${report.customer_id})` : ''}: ${report.ok ? 'CLEAN' : `${report.divergence_count} DIVERGENCE(S)`}`,
    `  postgres   ${c.db_rows} rows in ${c.db_chains} partition chains`,
    `  kafka      ${c.kafka_decisions} decision records (${c.kafka_duplicates} identical duplicates)`,
    `  replay     ${c.customer_events} customer events, ${c.decisions_replayed} decisions re-run, ${c.duplicate_commands} repeated commands, ${c.pending_commands} pending, ${c.dead_lettered_customer_events} dead-lettered`,
    `  ${report.events} events in ${(report.elapsed_ms / 1000).toFixed(2)} s (${report.events_per_second} events/s)`,
  ];
  if (report.divergences.length > 0) {
    lines.push('Divergences:');
    for (const d of report.divergences) lines.push(`  log_id ${d.log_id ?? '-'}  ${d.check.padEnd(14)} ${d.detail}`);
    if (report.divergence_count > report.divergences.length) lines.push(`  … and ${report.divergence_count - report.divergences.length} more`);
  }
  return `${lines.join('\n')}\n`;
}
