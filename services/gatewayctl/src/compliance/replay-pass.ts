// Phase (3) of verify on its own: re-runs the decider over customer-events and returns what it
// found as plain data (digests, positions, errors), so it can run in a worker thread beside the
// other checks and be compared with the recorded decisions afterwards.
import { Worker } from 'node:worker_threads';
import type { AnyEvent, EventCodec, SendDecided } from '@gw/events';
import type { KafkaInspector, PartitionRange } from '@gw/kafka';
import type { ComplianceDeps } from './context.ts';
import { replayDigestOf } from './fingerprint.ts';
import { Replayer } from './replay.ts';
import type { ReplayWorkerData, ReplayWorkerMessage } from './replay-worker.ts';

/** What to replay and where to stop; plain data, so it can be handed to a worker thread. */
export interface ReplayScope {
  topic: string;
  /** Per partition: [partition, low offset, end offset] (decimal strings). */
  ends: Array<[number, string, string]>;
  /** Per partition: the policy consumer's committed offset, or null when it never committed. */
  committed: Array<[number, string | null]>;
  /** Replay these customers only (verify --customer, or describing divergences); null: everyone. */
  customers: string[] | null;
  /** Commands whose replayed entries are wanted back in full (to describe a divergence). */
  keep?: string[];
}

/** [correlation id, replayDigestOf(replayed entry), partition, offset, customer id] */
export type ReplayedDecision = [string, string, number, string, string];

export interface ReplayError {
  eventType: string;
  correlationId: string;
  customerId: string;
  /** partition@offset */
  position: string;
  error: string;
}

export interface ReplayOutcome {
  /** Records read, decodable or not. */
  read: number;
  /** Records of the customers in scope. */
  customerEvents: number;
  undecodable: number;
  duplicateCommands: number;
  /** Every command decided, in the order of its partition. */
  decided: ReplayedDecision[];
  /** Commands past the committed offset: not decided yet, not checked. */
  pending: string[];
  errors: ReplayError[];
  /** The replayed entries of scope.keep. */
  kept: SendDecided[];
  elapsedMs: number;
}

export type ReplayProgress = (done: number, total: number) => void;

export const toScopeRanges = (ranges: Map<number, PartitionRange>): ReplayScope['ends'] => [...ranges.values()].map((r) => [r.partition, String(r.low), String(r.end)]);

/**
 * Reads the customer-events topic to the given ends and steps every record of the customers in
 * scope through the engine, as the policy consumer did: records past the consumer's committed
 * offset are pending, repeated commands are skipped, an engine error is recorded and the state kept.
 */
export async function replayCustomerEvents(kafka: KafkaInspector, codec: EventCodec, scope: ReplayScope, progress: ReplayProgress = () => undefined): Promise<ReplayOutcome> {
  const started = Date.now();
  const ends = new Map(scope.ends.map(([partition, low, end]) => [partition, { partition, low: BigInt(low), end: BigInt(end) }]));
  const committed = new Map(scope.committed.map(([partition, offset]) => [partition, offset === null ? null : BigInt(offset)]));
  const customers = scope.customers === null ? null : new Set(scope.customers);
  const keep = new Set(scope.keep ?? []);
  const total = [...ends.values()].reduce((n, r) => n + Number(r.end - r.low), 0);
  const outcome: ReplayOutcome = { read: 0, customerEvents: 0, undecodable: 0, duplicateCommands: 0, decided: [], pending: [], errors: [], kept: [], elapsedMs: 0 };
  const replayer = new Replayer();
  await kafka.readToEnd(scope.topic, {
    ends,
    concurrency: ends.size,
    onBatch: async (records, partition) => {
      const limit = committed.get(partition) ?? ends.get(partition)!.end;
      for (const record of records) {
        outcome.read++;
        let event: AnyEvent | null;
        try {
          event = await codec.decode(record);
        } catch {
          outcome.undecodable++; // the consumer skips these too
          continue;
        }
        if (!event) continue;
        if (customers && !customers.has(event.payload.customer_id)) continue;
        outcome.customerEvents++;
        if (BigInt(record.offset) >= limit) {
          if (event.type === 'SendRequested') outcome.pending.push(event.payload.correlation_id);
          continue;
        }
        const step = replayer.step(event, partition);
        if (step.kind === 'duplicate') outcome.duplicateCommands++;
        else if (step.kind === 'error') {
          outcome.errors.push({ eventType: event.type, correlationId: step.correlationId, customerId: step.customerId, position: `${partition}@${record.offset}`, error: step.error });
        } else if (step.kind === 'decided') {
          const expected = step.expected;
          outcome.decided.push([expected.correlation_id, replayDigestOf(expected), partition, record.offset, expected.customer_id]);
          if (keep.has(expected.correlation_id)) outcome.kept.push(expected);
        }
      }
      progress(outcome.read, total);
    },
  });
  outcome.elapsedMs = Date.now() - started;
  return outcome;
}

/**
 * Runs the replay in a worker thread when the connection settings are known (the decider is
 * CPU-bound, and the Postgres and decisions-topic checks keep the calling thread busy meanwhile);
 * on the calling thread otherwise, or when a worker cannot be started. A failure of the replay
 * itself (Kafka, registry) rejects, as it would on the calling thread.
 */
export function startReplay(deps: ComplianceDeps, scope: ReplayScope, progress: ReplayProgress, useWorker = true): { outcome: Promise<ReplayOutcome>; stop(): Promise<void> } {
  const inThread = () => replayCustomerEvents(deps.kafka, deps.codec, scope, progress);
  if (!useWorker || !deps.connection) return { outcome: inThread(), stop: async () => undefined };
  const data: ReplayWorkerData = { connection: deps.connection, topicPrefix: deps.topics.prefix, partitions: deps.topics.partitions, scope };
  let worker: Worker;
  try {
    worker = new Worker(new URL('./replay-worker-boot.mjs', import.meta.url), { workerData: data });
  } catch {
    return { outcome: inThread(), stop: async () => undefined };
  }
  const outcome = new Promise<ReplayOutcome>((resolve, reject) => {
    let answered = false;
    worker.on('message', (message: ReplayWorkerMessage) => {
      if (message.type === 'progress') progress(message.done, message.total);
      else if (message.type === 'done') (answered = true), resolve(message.outcome);
      else (answered = true), reject(new Error(message.message));
    });
    // The worker could not run at all (e.g. no TypeScript loader): replay here instead.
    worker.once('error', () => {
      if (!answered) (answered = true), inThread().then(resolve, reject);
    });
    worker.once('exit', () => {
      if (!answered) (answered = true), inThread().then(resolve, reject);
    });
  });
  return { outcome, stop: async () => void (await worker.terminate()) };
}
