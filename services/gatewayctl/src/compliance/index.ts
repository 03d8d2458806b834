import { createWriteStream } from 'node:fs';
import { finished } from 'node:stream/promises';
import type { Command } from 'commander';
import type { GatewayConfig } from '@gw/config';
import { complianceDeps, type ComplianceDeps } from './context.ts';
import { exportPolicyLog, type ExportFormat } from './export.ts';
import { terminalProgress } from './progress.ts';
import { RebuildRefused, rebuildProjections } from './rebuild.ts';
import { formatEntry, NotFound, showEntry } from './show.ts';
import { formatVerifyReport, verifyPolicyLog } from './verify.ts';

export { verifyPolicyLog, formatVerifyReport, type VerifyReport, type Divergence, type VerifyOptions, type CheckName } from './verify.ts';
export { rebuildProjections, REBUILT_TABLES, type RebuildReport, type RebuildOptions } from './rebuild.ts';
export { exportPolicyLog, csvField, CSV_COLUMNS, type ExportOptions } from './export.ts';
export { showEntry, type ShownEntry } from './show.ts';
export { complianceDeps, type ComplianceDeps } from './context.ts';
export type { ProgressCallback, ProgressEvent } from './progress.ts';

export interface ComplianceCommandDeps {
  config: GatewayConfig;
}

/** A failure meant for the operator: printed as is (or as {"error"} with --json), exit code 1. */
class UsageError extends Error {}

function isoTime(value: string): Date {
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) throw new UsageError(`${value} is not an ISO 8601 time (e.g. 2026-01-31T00:00:00Z).`);
  return date;
}

/**
 * Runs one compliance command with its own connections: prints nothing itself, maps operator
 * errors to one line (or {"error": …} with --json) and exit code 1, and always closes the pool.
 */
function run<A extends unknown[]>(deps: ComplianceCommandDeps, work: (ctx: ComplianceDeps, json: boolean, ...args: A) => Promise<number | void>) {
  return async (...args: A) => {
    const command = args[args.length - 1] as Command;
    const json = Boolean(command.optsWithGlobals().json);
    const ctx = complianceDeps(deps.config);
    try {
      const code = await work(ctx, json, ...args);
      if (typeof code === 'number') process.exitCode = code;
    } catch (error) {
      const known = error instanceof UsageError || error instanceof NotFound || error instanceof RebuildRefused;
      const message = known ? (error as Error).message : `Failed: ${(error as Error).message ?? 'unexpected error'}`;
      if (json) process.stdout.write(`${JSON.stringify({ error: message })}\n`);
      else process.stderr.write(`${message}\n`);
      process.exitCode = 1;
    } finally {
      await ctx.pool.end().catch(() => undefined);
    }
  };
}

/** Adds `policy-log show|export|verify` and `projections rebuild` to the operator CLI. */
export function registerComplianceCommands(program: Command, deps: ComplianceCommandDeps): void {
  const policyLog = program.command('policy-log').description('inspect, export and verify the policy log');

  policyLog
    .command('show')
    .description('one entry: its inputs, every rule evaluated, the decision, its chain fields and the delivery outcome')
    .argument('<log_id>', 'the policy-log entry id')
    .action(run(deps, async (ctx, json, logId: string) => {
      const id = Number(logId);
      if (!Number.isSafeInteger(id) || id < 1) throw new UsageError(`${logId} is not a log id.`);
      const entry = await showEntry(ctx.pool, id);
      process.stdout.write(json ? `${JSON.stringify(entry)}\n` : formatEntry(entry));
    }));

  policyLog
    .command('export')
    .description('stream the entries decided in [--from, --to) in log_id order, as NDJSON or CSV (reasons as JSON in one column)')
    .requiredOption('--from <time>', 'ISO 8601 time, inclusive', isoTime)
    .requiredOption('--to <time>', 'ISO 8601 time, exclusive', isoTime)
    .option('--customer <id>', 'only this customer')
    .option('--format <format>', 'ndjson or csv', 'ndjson')
    .option('--output <file>', 'write to this file instead of stdout')
    .action(run(deps, async (ctx, json, opts: { from: Date; to: Date; customer?: string; format: string; output?: string }) => {
      if (opts.format !== 'ndjson' && opts.format !== 'csv') throw new UsageError(`Unknown format ${opts.format}: use ndjson or csv.`);
      if (opts.to <= opts.from) throw new UsageError('--to must be after --from.');
      const out = opts.output ? createWriteStream(opts.output) : process.stdout;
      const bar = terminalProgress();
      const { rows } = await exportPolicyLog(ctx.pool, out, { from: opts.from, to: opts.to, customerId: opts.customer, format: opts.format as ExportFormat, onProgress: bar });
      bar.end();
      if (opts.output) {
        out.end();
        await finished(out);
        const summary = { exported: rows, format: opts.format, file: opts.output };
        process.stdout.write(json ? `${JSON.stringify(summary)}\n` : `Exported ${rows} entries to ${opts.output} (${opts.format}).\n`);
      } else if (process.stderr.isTTY) {
        process.stderr.write(`Exported ${rows} entries.\n`);
      }
    }));

  policyLog
    .command('verify')
    .description('check the hash chain in Postgres and on Kafka, and re-run the decider over customer-events; exit 1 on any divergence')
    .option('--customer <id>', "only this customer's entries (and the partition chains that hold them)")
    .action(run(deps, async (ctx, json, opts: { customer?: string }) => {
      const bar = terminalProgress();
      const report = await verifyPolicyLog(ctx, { customerId: opts.customer, onProgress: bar });
      bar.end();
      process.stdout.write(json ? `${JSON.stringify(report)}\n` : formatVerifyReport(report));
      return report.ok ? 0 : 1;
    }));

  const projections = program.command('projections').description("the policy consumer's Postgres projections");
  projections
    .command('rebuild')
    .description(
      'rebuild policy_state, policy_offsets, policy_chain, policy_log, suppressions and quota_usage from Kafka, from zero, in one ' +
        'transaction. Deliveries are NOT rebuilt (they guard against sending twice and stay as they are). Stop the policy service first.',
    )
    .option('--force', 'rebuild even when the policy consumer group has active members')
    .action(run(deps, async (ctx, json, opts: { force?: boolean }) => {
      const bar = terminalProgress();
      const report = await rebuildProjections(ctx, {
        force: opts.force,
        onProgress: bar,
        onPhase: (line) => {
          bar.end();
          process.stderr.write(`rebuild: ${line}\n`);
        },
      });
      bar.end();
      if (json) process.stdout.write(`${JSON.stringify(report)}\n`);
      else {
        process.stdout.write(
          `Rebuilt from Kafka in ${(report.elapsed_ms / 1000).toFixed(2)} s: ${report.policy_log} policy-log entries, ${report.policy_state} customer states, ` +
            `${report.suppressions} suppressions, ${report.quota_usage} quota rows, ${report.policy_chain} chain heads; log_id sequence at ${report.log_id_sequence ?? '-'}.\n`,
        );
        if (report.kafka_conflicts > 0) process.stdout.write(`Warning: ${report.kafka_conflicts} conflicting decision records were ignored (run policy-log verify).\n`);
        if (report.replay_divergences > 0) process.stdout.write(`Warning: ${report.replay_divergences} decisions replay differently (run policy-log verify).\n`);
        for (const s of report.stopped) process.stdout.write(`Partition ${s.partition}: stopped at offset ${s.offset}, command ${s.command_id} has no recorded decision yet (left to the consumer).\n`);
      }
    }));
}
