// make cluster-chaos: the fault suite on the three-node Kafka cluster, with two processes of the
// API and of every stage. A broker is killed under sustained sends and started again, one process
// of each stage is killed, half the traffic goes through each API process. Exit status 1 unless
// every count that must be zero is.
import { failures, formatReport, runChaos, type Fault } from './scenario.ts';

const BROKER_DOWN_MS = Number(process.env.CHAOS_BROKER_DOWN_MS ?? 20_000);
const STAGES = ['policy', 'delivery', 'instance-events', 'webhooks'] as const;

const FAULTS: Fault[] = [
  { kind: 'kill-broker', node: 1, downMs: BROKER_DOWN_MS },
  // One process of each stage at once: its partitions move to the other process of its group.
  { kind: 'kill', services: [...STAGES], interruptSends: true, untilTakenOver: true },
  { kind: 'kill', services: ['api'] },
  { kind: 'kill', services: STAGES.map((stage) => `${stage}#1` as const), interruptSends: true, untilTakenOver: true },
  { kind: 'kill-broker', node: 3, downMs: BROKER_DOWN_MS },
];

const report = await runChaos({
  faults: FAULTS,
  replicas: 2,
  clients: Number(process.env.CHAOS_CLIENTS ?? 12),
  pauseMs: Number(process.env.CHAOS_PAUSE_MS ?? 8_000),
  tailMs: 8_000,
  // Info level: the "partitions assigned" lines show partitions moving between processes.
  env: { LOG_LEVEL: 'info' },
  log: (line) => process.stdout.write(`[cluster-chaos] ${line}\n`),
});
const moves = report.assignments.map((a) => `  t+${a.at_s.toFixed(1).padStart(6)} s  ${a.process.padEnd(18)} ${a.group.replace(/^t[0-9a-z]+\./, '').padEnd(26)} ${a.partitions} partitions`);
process.stdout.write(`\npartitions assigned (process, group, how many), in time order:\n${moves.join('\n')}\n\n${formatReport(report)}\n\n${JSON.stringify(report)}\n`);
const failed = failures(report.counts);
process.stdout.write(failed.length === 0 ? 'cluster-chaos: every count that must be zero is zero\n' : `cluster-chaos: FAILED (${failed.join(', ')})\n`);
process.exit(failed.length === 0 ? 0 : 1);
