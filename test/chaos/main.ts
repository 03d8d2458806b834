// make chaos: the whole fault suite, with the counts printed; exit status 1 unless every count that must be zero is.
import { failures, formatReport, runChaos, type Fault } from './scenario.ts';

const FAULTS: Fault[] = [
  { kind: 'kill', services: ['policy'] },
  { kind: 'kill', services: ['delivery'], interruptSends: true },
  { kind: 'kill', services: ['api'] },
  { kind: 'kill', services: ['instance-events'] },
  { kind: 'kill', services: ['webhooks'] },
  { kind: 'kill', services: ['policy', 'delivery'], interruptSends: true },
  { kind: 'kill', services: ['api', 'instance-events', 'webhooks'] },
  { kind: 'drop-postgres-connections' },
  { kind: 'restart-broker' },
  { kind: 'drop-postgres-connections' },
  { kind: 'kill', services: ['api', 'policy', 'delivery', 'instance-events', 'webhooks'], interruptSends: true },
];

const report = await runChaos({
  faults: FAULTS,
  clients: Number(process.env.CHAOS_CLIENTS ?? 12),
  pauseMs: Number(process.env.CHAOS_PAUSE_MS ?? 4_000),
  tailMs: 5_000,
  log: (line) => process.stdout.write(`[chaos] ${line}\n`),
});
process.stdout.write(`\n${formatReport(report)}\n\n${JSON.stringify(report)}\n`);
const failed = failures(report.counts);
process.stdout.write(failed.length === 0 ? 'chaos: every count that must be zero is zero\n' : `chaos: FAILED (${failed.join(', ')})\n`);
process.exit(failed.length === 0 ? 0 : 1);
