// Phase (3) of verify on its own: re-runs the decider over customer-events and returns what it
// found as plain data (digests, positions, errors), to be compared with the recorded decisions.
//
// With worker threads (the default) the calling thread reads the topic, as a plain consumer
// would, and hands each record's raw bytes to the worker that owns its partition; the workers
// decode, decide and digest. Reading stays in one consumer (each reader would fetch every
// partition of the topic), and the CPU-bound part runs on every core.
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { EVENT_TYPE_HEADER, EventCodec, type AnyEvent, type SendDecided } from '@gw/events';
import { POLICY_VERSION } from '@gw/policy';
import type { ConsumedRecord, KafkaInspector, PartitionRange } from '@gw/kafka';
import type { ComplianceDeps } from './context.ts';
import { replayDigestOfDecision } from './fingerprint.ts';
import { codecDecoder, EVENT_TYPES, SyncRecordDecoder, type RecordDecoder } from './record-decoder.ts';
import { expectedEntry, Replayer } from './replay.ts';
import type { ReplayWorkerData, ReplayWorkerMessage, ReplayWorkerRequest } from './replay-worker.ts';
import { digestDecisionsTopic, type DecisionDigestBatch } from './decision-digests.ts';

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
  /** Positions (partition@offset) the policy consumer dead-lettered and moved past: skipped as it skipped them. */
  skip?: string[];
  /**
   * The partitions of `ends` this share replays (one worker's share); all of them when absent. A
   * customer's records are all on one partition, so partitions can be replayed apart.
   */
  partitions?: number[];
  /**
   * For the benchmark's floors only (verify never sets it): stop each record after decoding it, or
   * after deciding it without digesting the decision, so the bench can tell what each step costs
   * in this very pipeline. The outcome then holds counts and positions, no digests.
   */
  stopAfter?: 'decode' | 'decide';
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
  /** Records the policy consumer dead-lettered (scope.skip), not replayed. */
  deadLettered: number;
  duplicateCommands: number;
  /** Every command decided, in the order of its partition. */
  decided: ReplayedDecision[];
  /** Commands past the committed offset: not decided yet, not checked. */
  pending: string[];
  errors: ReplayError[];
  /** The replayed entries of scope.keep. */
  kept: SendDecided[];
  /** From the first read to the outcome (not counting the wait for worker threads to load). */
  elapsedMs: number;
  /** How long run() waited for its worker threads to finish loading before it could start (0 on this thread). */
  startMs?: number;
}

export type ReplayProgress = (done: number, total: number) => void;

export const toScopeRanges = (ranges: Map<number, PartitionRange>): ReplayScope['ends'] => [...ranges.values()].map((r) => [r.partition, String(r.low), String(r.end)]);

const emptyOutcome = (): ReplayOutcome => ({ read: 0, customerEvents: 0, undecodable: 0, deadLettered: 0, duplicateCommands: 0, decided: [], pending: [], errors: [], kept: [], elapsedMs: 0 });

/** A record that could not be decoded (the consumer skips these too). */
export const UNDECODABLE = Symbol('undecodable');

/**
 * The replay of one share, record by record in partition order: records past the consumer's
 * committed offset are pending, repeated commands are skipped, an engine error is recorded and
 * the state kept, every decision is digested (replayDigestOfDecision).
 */
export class ReplayAccumulator {
  readonly outcome = emptyOutcome();
  private readonly replayer = new Replayer();
  private readonly limits: Map<number, { exact: bigint; number: number | null }>;
  private readonly customers: Set<string> | null;
  private readonly keep: Set<string>;
  private readonly skip: Set<string>;
  private readonly stopAfter: ReplayScope['stopAfter'];

  constructor(scope: ReplayScope) {
    this.stopAfter = scope.stopAfter;
    const committed = new Map(scope.committed.map(([partition, offset]) => [partition, offset]));
    // Past the committed offset (or the end, when the consumer never committed) records are pending.
    this.limits = new Map(
      scope.ends.map(([partition, , end]) => {
        const exact = BigInt(committed.get(partition) ?? end);
        return [partition, { exact, number: exact <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(exact) : null }];
      }),
    );
    this.customers = scope.customers === null ? null : new Set(scope.customers);
    this.keep = new Set(scope.keep ?? []);
    this.skip = new Set(scope.skip ?? []);
  }

  /** offset >= the partition's limit; compared as numbers when both are exact as numbers (offsets of fewer than 16 digits are). */
  private isPending(partition: number, offset: string): boolean {
    const limit = this.limits.get(partition);
    if (!limit) return BigInt(offset) >= 0n;
    if (limit.number !== null && offset.length < 16) {
      const value = Number(offset);
      if (Number.isSafeInteger(value)) return value >= limit.number;
    }
    return BigInt(offset) >= limit.exact;
  }

  add(event: AnyEvent | null | typeof UNDECODABLE, partition: number, offset: string): void {
    const outcome = this.outcome;
    outcome.read++;
    if (this.skip.size > 0 && this.skip.has(`${partition}@${offset}`)) {
      outcome.deadLettered++;
      return;
    }
    if (event === UNDECODABLE) {
      outcome.undecodable++;
      return;
    }
    if (!event) return;
    if (this.customers && !this.customers.has(event.payload.customer_id)) return;
    outcome.customerEvents++;
    if (this.isPending(partition, offset)) {
      if (event.type === 'SendRequested') outcome.pending.push(event.payload.correlation_id);
      return;
    }
    if (this.stopAfter === 'decode') return;
    const step = this.replayer.advance(event);
    if (step.kind === 'duplicate') outcome.duplicateCommands++;
    else if (step.kind === 'error') {
      outcome.errors.push({ eventType: event.type, correlationId: step.correlationId, customerId: step.customerId, position: `${partition}@${offset}`, error: step.error });
    } else if (step.kind === 'decided') {
      const { command, decision, digest } = step;
      const replayDigest = this.stopAfter === 'decide' ? '' : replayDigestOfDecision(command, decision, digest, POLICY_VERSION, partition);
      outcome.decided.push([command.correlation_id, replayDigest, partition, offset, command.customer_id]);
      if (this.keep.has(command.correlation_id)) outcome.kept.push(expectedEntry(command, decision, digest, partition));
    }
  }
}

const scopeEnds = (scope: ReplayScope): Map<number, PartitionRange> =>
  new Map(scope.ends.filter(([partition]) => !scope.partitions || scope.partitions.includes(partition)).map(([partition, low, end]) => [partition, { partition, low: BigInt(low), end: BigInt(end) }]));

const recordsIn = (ends: Map<number, PartitionRange>) => [...ends.values()].reduce((n, r) => n + Number(r.end - r.low), 0);

/**
 * Reads the customer-events topic to the given ends and steps every record of the customers in
 * scope through the engine on this thread, as the policy consumer did (see ReplayAccumulator).
 * `decoder` is an EventCodec (decodes as the codec does) or a RecordDecoder.
 */
export async function replayCustomerEvents(kafka: KafkaInspector, decoder: EventCodec | RecordDecoder, scope: ReplayScope, progress: ReplayProgress = () => undefined): Promise<ReplayOutcome> {
  const started = Date.now();
  const decode = decoder instanceof EventCodec ? codecDecoder(decoder) : decoder;
  const ends = scopeEnds(scope);
  const total = recordsIn(ends);
  const replay = new ReplayAccumulator(scope);
  await kafka.readToEnd(scope.topic, {
    ends,
    concurrency: ends.size,
    onBatch: async (records, partition) => {
      for (const record of records) {
        let event: AnyEvent | null | typeof UNDECODABLE;
        try {
          const decoded = decode.decode(record);
          event = decoded instanceof Promise ? await decoded : decoded;
        } catch {
          event = UNDECODABLE;
        }
        replay.add(event, partition, record.offset);
      }
      progress(replay.outcome.read, total);
    },
  });
  replay.outcome.elapsedMs = Date.now() - started;
  return replay.outcome;
}

/**
 * Splits the partitions of a scope into at most `parts` shares of about the same number of
 * records (largest partition first, each to the share with the fewest records so far).
 */
export function splitScope(scope: ReplayScope, parts: number): ReplayScope[] {
  const ranges = scope.ends.filter(([partition]) => !scope.partitions || scope.partitions.includes(partition));
  const count = Math.max(1, Math.min(parts, ranges.length));
  const shares = Array.from({ length: count }, () => ({ records: 0n, partitions: [] as number[] }));
  const bySize = [...ranges].sort((a, b) => {
    const diff = BigInt(b[2]) - BigInt(b[1]) - (BigInt(a[2]) - BigInt(a[1]));
    return diff > 0n ? 1 : diff < 0n ? -1 : a[0] - b[0];
  });
  for (const [partition, low, end] of bySize) {
    const share = shares.reduce((least, s) => (s.records < least.records ? s : least));
    share.records += BigInt(end) - BigInt(low);
    share.partitions.push(partition);
  }
  return shares.map((s) => ({ ...scope, partitions: s.partitions.sort((a, b) => a - b) }));
}

/**
 * Puts the outcomes of several shares together as one replay would have made them. Only a command
 * id that was decided in two shares (two customers' commands with one id) needs care: the consumer
 * decides a command id once, so every decision after the first counts as a repeated command.
 */
export function mergeOutcomes(outcomes: ReplayOutcome[]): ReplayOutcome {
  if (outcomes.length === 1) return outcomes[0]!;
  const merged = emptyOutcome();
  const seen = new Set<string>();
  for (const o of outcomes) {
    merged.read += o.read;
    merged.customerEvents += o.customerEvents;
    merged.undecodable += o.undecodable;
    merged.deadLettered += o.deadLettered;
    merged.duplicateCommands += o.duplicateCommands;
    for (const d of o.decided) {
      if (seen.has(d[0])) merged.duplicateCommands++;
      else seen.add(d[0]), merged.decided.push(d);
    }
    merged.pending.push(...o.pending);
    merged.errors.push(...o.errors);
    merged.kept.push(...o.kept);
    merged.elapsedMs = Math.max(merged.elapsedMs, o.elapsedMs);
  }
  return merged;
}

/** Records as handed to a worker: raw values back to back in one transferable buffer. */
export interface RecordBatch {
  partition: number;
  offsets: string[];
  /** Index into EVENT_TYPES of the event-type header; NO_EVENT when it names no event type. */
  types: Uint8Array;
  /** Byte length of each value in `values`; -1 for a record without a value. */
  lengths: Int32Array;
  values: ArrayBuffer;
}

export const NO_EVENT = 255;
const TYPE_INDEX = new Map(EVENT_TYPES.map((type, i) => [type as string, i]));

/** Packs a batch for a worker (copying the values out of the fetch buffers into one transferable buffer). */
export function packBatch(records: readonly ConsumedRecord[], partition: number): RecordBatch {
  const n = records.length;
  const offsets = new Array<string>(n);
  const types = new Uint8Array(n);
  const lengths = new Int32Array(n);
  let total = 0;
  for (let i = 0; i < n; i++) {
    const record = records[i]!;
    offsets[i] = record.offset;
    const header = record.headers[EVENT_TYPE_HEADER];
    types[i] = (header === undefined ? undefined : TYPE_INDEX.get(header)) ?? NO_EVENT;
    const length = record.value ? record.value.length : -1;
    lengths[i] = length;
    if (length > 0) total += length;
  }
  const values = new ArrayBuffer(total);
  const bytes = new Uint8Array(values);
  let at = 0;
  for (let i = 0; i < n; i++) {
    const value = records[i]!.value;
    if (value && value.length > 0) {
      bytes.set(value, at);
      at += value.length;
    }
  }
  return { partition, offsets, types, lengths, values };
}

/** Decodes a packed batch record by record (as SyncRecordDecoder.decode would each record) into the share's replay. */
export async function replayBatch(batch: RecordBatch, decoder: SyncRecordDecoder, replay: ReplayAccumulator): Promise<void> {
  let at = 0;
  for (let i = 0; i < batch.offsets.length; i++) {
    const length = batch.lengths[i]!;
    const type = batch.types[i]!;
    let event: AnyEvent | null | typeof UNDECODABLE = null;
    if (type !== NO_EVENT && length >= 0) {
      try {
        const decoded = decoder.decodeValue(EVENT_TYPES[type]!, Buffer.from(batch.values, at, length));
        event = decoded instanceof Promise ? await decoded : decoded;
      } catch {
        event = UNDECODABLE;
      }
    }
    if (length > 0) at += length;
    replay.add(event, batch.partition, batch.offsets[i]!);
  }
}

/**
 * Worker threads for a replay: one per core (the shares are CPU-bound, so more would only
 * contend), at most MAX_REPLAY_WORKERS; a scope of fewer partitions uses fewer (splitScope).
 */
export const MAX_REPLAY_WORKERS = 16;

export function defaultReplayWorkers(): number {
  return Math.max(1, Math.min(MAX_REPLAY_WORKERS, availableParallelism()));
}

export interface ReplayRunner {
  /** Replays the scope; call once. */
  run(scope: ReplayScope, progress: ReplayProgress): Promise<ReplayOutcome>;
  /**
   * After run: reads the decisions topic to `ends` and hands each batch's digests to `onBatch`, in
   * each partition's order. On a worker thread when run had them (the one left), else on this thread.
   */
  digestDecisions(topic: string, ends: Map<number, PartitionRange>, onBatch: (batch: DecisionDigestBatch) => void): Promise<void>;
  /** Ends the workers (after a failure elsewhere, when run was never called, or when done). */
  stop(): Promise<void>;
}

/** Records a worker may have been handed and not yet replayed before the reader waits for it. */
const MAX_QUEUED_RECORDS = 50_000;

/**
 * Starts the replay's worker threads at once, so they load while the caller takes its snapshots;
 * run() then reads the topic on this thread and hands each worker the records of its partitions.
 * On the calling thread instead when the connection settings are not known, when useWorker is
 * false, or when a worker cannot be started or dies before it is ready. A failure of the replay
 * itself (Kafka, registry, a worker dying mid-way) rejects, as it would on the calling thread.
 */
export function prepareReplay(deps: ComplianceDeps, useWorker = true, workers = defaultReplayWorkers()): ReplayRunner {
  const decoder = (): RecordDecoder => (deps.connection ? new SyncRecordDecoder(deps.connection.schemaRegistryUrl) : codecDecoder(deps.codec));
  const inThread = (scope: ReplayScope, progress: ReplayProgress) => replayCustomerEvents(deps.kafka, decoder(), scope, progress);
  const digestInThread: ReplayRunner['digestDecisions'] = (topic, ends, onBatch) => digestDecisionsTopic(deps.kafka, decoder(), topic, ends, onBatch);
  if (!useWorker || !deps.connection || workers < 1) {
    return { run: (scope, progress) => inThread(scope, progress), digestDecisions: digestInThread, stop: async () => undefined };
  }
  const { schemaRegistryUrl, kafkaBrokers, groupPrefix } = deps.connection;
  const data: ReplayWorkerData = { schemaRegistryUrl, kafkaBrokers, groupPrefix };
  const threads: Array<{ worker: Worker; ready: Promise<boolean>; listeners: Set<(message: ReplayWorkerMessage) => void>; exited: Promise<void> }> = [];
  let startFailed = false;
  for (let i = 0; i < workers && !startFailed; i++) {
    let worker: Worker;
    try {
      // A larger young generation: the replay allocates many short-lived objects per record, and
      // fewer, larger scavenges cost less in all.
      worker = new Worker(new URL('./replay-worker-boot.mjs', import.meta.url), { workerData: data, resourceLimits: { maxYoungGenerationSizeMb: 96 } });
    } catch {
      startFailed = true;
      break;
    }
    const listeners = new Set<(message: ReplayWorkerMessage) => void>();
    let markReady!: (ok: boolean) => void;
    const ready = new Promise<boolean>((resolve) => (markReady = resolve));
    worker.on('message', (message: ReplayWorkerMessage) => {
      if (message.type === 'ready') markReady(true);
      for (const listener of listeners) listener(message);
    });
    // Not able to run at all (e.g. no TypeScript loader): the replay runs on this thread instead.
    worker.on('error', () => markReady(false));
    const exited = new Promise<void>((resolve) => worker.once('exit', () => (markReady(false), resolve())));
    threads.push({ worker, ready, listeners, exited });
  }
  const stop = async () => {
    await Promise.all(threads.map((t) => t.worker.terminate()));
  };
  // The thread left for digestDecisions once run has replayed on the workers.
  let spare: (typeof threads)[number] | null = null;

  const run = async (scope: ReplayScope, progress: ReplayProgress): Promise<ReplayOutcome> => {
    const waited = Date.now();
    if (startFailed || threads.length === 0 || !(await Promise.all(threads.map((t) => t.ready))).every(Boolean)) {
      await stop();
      return inThread(scope, progress);
    }
    const started = Date.now();
    const shares = splitScope(scope, threads.length);
    const ends = scopeEnds(scope);
    const total = recordsIn(ends);
    const owner = new Map<number, number>();
    shares.forEach((share, i) => share.partitions!.forEach((partition) => owner.set(partition, i)));
    const done = shares.map(() => 0);
    const queued = shares.map(() => 0);
    // Readers of a worker's partitions waiting for it to catch up (several partitions are read at once).
    const waiting: Array<Array<() => void>> = shares.map(() => []);
    const wake = (i: number) => waiting[i]!.splice(0).forEach((resolve) => resolve());
    let failure: Error | null = null;
    const outcomes = shares.map(
      (share, i) =>
        new Promise<ReplayOutcome>((resolve, reject) => {
          const thread = threads[i]!;
          const fail = (error: Error) => {
            failure ??= error;
            wake(i);
            reject(error);
          };
          thread.listeners.add((message) => {
            if (message.type === 'progress') {
              done[i] = message.done;
              queued[i] = Math.max(0, queued[i]! - message.replayed);
              if (queued[i]! < MAX_QUEUED_RECORDS) wake(i);
              progress(done.reduce((a, b) => a + b, 0), total);
            } else if (message.type === 'done') resolve(message.outcome);
            else if (message.type === 'failed') fail(new Error(message.message));
          });
          void thread.exited.then(() => fail(new Error('a replay worker ended before it answered')));
          thread.worker.postMessage({ type: 'start', scope: share } satisfies ReplayWorkerRequest);
        }),
    );
    for (const outcome of outcomes) outcome.catch(() => undefined); // awaited below
    // Workers without a share have nothing to do.
    for (const thread of threads.slice(shares.length)) void thread.worker.terminate();
    try {
      await deps.kafka.readToEnd(scope.topic, {
        ends,
        concurrency: ends.size,
        onBatch: async (records, partition) => {
          if (failure) throw failure;
          const i = owner.get(partition)!;
          const batch = packBatch(records, partition);
          threads[i]!.worker.postMessage({ type: 'batch', batch } satisfies ReplayWorkerRequest, [batch.values, batch.types.buffer as ArrayBuffer, batch.lengths.buffer as ArrayBuffer]);
          queued[i]! += records.length;
          // The worker replays more slowly than this thread reads: hold the reader, not the memory.
          while (queued[i]! >= MAX_QUEUED_RECORDS && !failure) await new Promise<void>((resolve) => waiting[i]!.push(resolve));
          if (failure) throw failure;
        },
      });
      for (const [i] of shares.entries()) threads[i]!.worker.postMessage({ type: 'end' } satisfies ReplayWorkerRequest);
      const merged = mergeOutcomes(await Promise.all(outcomes));
      merged.elapsedMs = Date.now() - started;
      merged.startMs = started - waited;
      // One worker stays for the decisions topic; the others have nothing left to do.
      spare = threads[0]!;
      for (const thread of threads.slice(1)) void thread.worker.terminate();
      return merged;
    } catch (error) {
      await stop();
      throw failure ?? error;
    }
  };
  const digestDecisions: ReplayRunner['digestDecisions'] = async (topic, ends, onBatch) => {
    const thread = spare;
    spare = null;
    if (!thread) return digestInThread(topic, ends, onBatch);
    try {
      await new Promise<void>((resolve, reject) => {
        thread.listeners.clear();
        thread.listeners.add((message) => {
          if (message.type === 'decisions-batch') {
            try {
              onBatch(message.batch);
            } catch (error) {
              reject(error as Error);
              return;
            }
            thread.worker.postMessage({ type: 'ack', records: message.batch.read } satisfies ReplayWorkerRequest);
          } else if (message.type === 'decisions-done') resolve();
          else if (message.type === 'failed') reject(new Error(message.message));
        });
        void thread.exited.then(() => reject(new Error('a verify worker ended before it answered')));
        thread.worker.postMessage({ type: 'decisions', topic, ends: toScopeRanges(ends) } satisfies ReplayWorkerRequest);
      });
    } finally {
      await thread.worker.terminate();
    }
  };
  return { run, digestDecisions, stop };
}
