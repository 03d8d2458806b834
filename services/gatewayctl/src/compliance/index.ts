import { createWriteStream } from 'node:fs';
import { finished } from 'node:stream/promises';
import type { Command } from 'commander';
import type { GatewayConfig } from '@gw/config';
import { describeRules } from '@gw/policy';
import { CliError, wantsJson, type ActionWrapper } from '../action.ts';
// The export, verify and replay are @gw/compliance's (shared with the dashboard); the commands are here.
import { exportPolicyLog, verifyPolicyLog, type ComplianceDeps, type ExportFormat } from '@gw/compliance';
import { complianceDeps } from './context.ts';
import { terminalProgress } from './progress.ts';
import { rebuildProjections } from './rebuild.ts';
import { formatEntry, showEntry } from './show.ts';
import { formatVerifyReport } from './verify.ts';

export interface ComplianceCommandDeps {
  config: GatewayConfig;
  action: ActionWrapper;
}

function isoTime(value: string): Date {
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) throw new CliError(`${value} is not an ISO 8601 time (e.g. 2026-01-31T00:00:00Z).`);
  return date;
}

/** Adds `policy-log show|export|verify` and `projections rebuild` to the operator CLI. */
export function registerComplianceCommands(program: Command, { config, action }: ComplianceCommandDeps): void {
  // Each command prints its own output, and opens its connections on first use (`open`), once
  // its arguments have been checked: creating the pool connects to Postgres.
  const run = <A extends unknown[]>(work: (open: () => Promise<ComplianceDeps>, json: boolean, ...args: A) => Promise<void>) =>
    action(async (...args: A) => {
      let ctx: Promise<ComplianceDeps> | undefined;
      try {
        await work(() => (ctx ??= complianceDeps(config)), wantsJson(args), ...args);
      } finally {
        await ctx?.then((opened) => opened.pool.end()).catch(() => undefined);
      }
    });
  const policyLog = program.command('policy-log').description('inspect, export and verify the policy log');

  policyLog
    .command('rules')
    .description('the rules every send is checked against, in the order the log records them, with the code and HTTP status each refuses with')
    .action(action(async () => describeRules()));

  policyLog
    .command('show')
    .description('one entry: its inputs, every rule evaluated, the decision, its chain fields and the delivery outcome')
    .argument('<log_id>', 'the policy-log entry id')
    .action(run(async (open, json, logId: string) => {
      const id = Number(logId);
      if (!Number.isSafeInteger(id) || id < 1) throw new CliError(`${logId} is not a log id.`);
      const entry = await showEntry((await open()).pool, id);
      process.stdout.write(json ? `${JSON.stringify(entry)}\n` : formatEntry(entry));
    }));

  policyLog
    .command('export')
    .description('stream the entries decided in [--from, --to) in log_id order, as NDJSON or CSV (reasons as JSON in one column)')
    // Checked in the action, not by a commander parser: a parser's error would escape the wrapper.
    .requiredOption('--from <time>', 'ISO 8601 time, inclusive')
    .requiredOption('--to <time>', 'ISO 8601 time, exclusive')
    .option('--customer <id>', 'only this customer')
    .option('--format <format>', 'ndjson or csv', 'ndjson')
    .option('--output <file>', 'write to this file instead of stdout')
    .action(run(async (open, json, opts: { from: string; to: string; customer?: string; format: string; output?: string }) => {
      const from = isoTime(opts.from);
      const to = isoTime(opts.to);
      if (opts.format !== 'ndjson' && opts.format !== 'csv') throw new CliError(`Unknown format ${opts.format}: use ndjson or csv.`);
      if (to <= from) throw new CliError('--to must be after --from.');
      const out = opts.output ? createWriteStream(opts.output) : process.stdout;
      const bar = terminalProgress();
      const { rows } = await exportPolicyLog((await open()).pool, out, { from, to, customerId: opts.customer, format: opts.format as ExportFormat, onProgress: bar });
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
    .action(run(async (open, json, opts: { customer?: string }) => {
      const bar = terminalProgress();
      const report = await verifyPolicyLog(await open(), { customerId: opts.customer, onProgress: bar });
      bar.end();
      process.stdout.write(json ? `${JSON.stringify(report)}\n` : formatVerifyReport(report));
      if (!report.ok) process.exitCode = 1;
    }));

  const projections = program.command('projections').description("the policy consumer's Postgres projections");
  projections
    .command('rebuild')
    .description(
      'rebuild policy_state, policy_offsets, policy_chain, policy_log, suppressions and quota_usage from Kafka, from zero, in one ' +
        'transaction. Deliveries are NOT rebuilt (they guard against sending twice and stay as they are). Stop the policy service first.',
    )
    .option('--force', 'rebuild even when the policy consumer group has active members')
    .action(run(async (open, json, opts: { force?: boolean }) => {
      const bar = terminalProgress();
      const report = await rebuildProjections(await open(), {
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
