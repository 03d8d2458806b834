// Worker thread of verify (started through replay-worker-boot.mjs as soon as verify starts). Its
// first job is the replay: it is handed its share of the scope, then the raw records of its
// partitions as the calling thread reads them; it decodes, decides and digests them in order, and
// posts the outcome back once told the records are all there. One worker then takes a second job:
// it reads the decisions topic itself and posts back each batch's digests (decision-digests.ts),
// so the calling thread is left with the Postgres pass and the comparisons.
import { parentPort, workerData } from 'node:worker_threads';
import { digestDecisionsTopic, type DecisionDigestBatch } from './decision-digests.ts';
import { SyncRecordDecoder } from './record-decoder.ts';
import { ReplayAccumulator, replayBatch, type RecordBatch, type ReplayOutcome, type ReplayScope } from './replay-pass.ts';

export interface ReplayWorkerData {
  schemaRegistryUrl: string;
  kafkaBrokers: string[];
  groupPrefix: string;
}

/** Most digests posted and not yet taken by the calling thread before the worker's reader waits. */
const MAX_UNACKED_DIGESTS = 20_000;

/**
 * From the calling thread: the replay's share (once), its records batch by batch, then the end;
 * later, at most once, the decisions topic to digest (partitions as [partition, low, end]), and
 * acknowledgements of the digest batches taken.
 */
export type ReplayWorkerRequest =
  | { type: 'start'; scope: ReplayScope }
  | { type: 'batch'; batch: RecordBatch }
  | { type: 'end' }
  | { type: 'decisions'; topic: string; ends: Array<[number, string, string]> }
  | { type: 'ack'; records: number };

export type ReplayWorkerMessage =
  | { type: 'ready' }
  /** After each batch: records replayed so far, and in this batch. */
  | { type: 'progress'; done: number; replayed: number }
  | { type: 'done'; outcome: ReplayOutcome }
  | { type: 'decisions-batch'; batch: DecisionDigestBatch }
  | { type: 'decisions-done' }
  | { type: 'failed'; message: string };

const data = workerData as ReplayWorkerData;
const port = parentPort!;
const post = (message: ReplayWorkerMessage) => port.postMessage(message);
const decoder = new SyncRecordDecoder(data.schemaRegistryUrl);

let replay: ReplayAccumulator | null = null;
let started = 0;
const queue: RecordBatch[] = [];
let ended = false;
let busy = false;
let finished = false;

async function drain(): Promise<void> {
  if (busy || finished) return;
  busy = true;
  try {
    while (queue.length > 0) {
      const batch = queue.shift()!;
      await replayBatch(batch, decoder, replay!);
      post({ type: 'progress', done: replay!.outcome.read, replayed: batch.offsets.length });
    }
    if (ended) {
      finished = true;
      replay!.outcome.elapsedMs = Date.now() - started;
      post({ type: 'done', outcome: replay!.outcome });
    }
  } catch (error) {
    finished = true;
    post({ type: 'failed', message: error instanceof Error ? error.message : String(error) });
  } finally {
    busy = false;
  }
}

// The decisions job: digests posted and not yet acknowledged, and the reader waiting on them.
let unacked = 0;
let resumeReader: (() => void) | null = null;

async function digestDecisions(topic: string, ends: Array<[number, string, string]>): Promise<void> {
  try {
    // Loaded only for this job: the replay, which every worker runs, does not read Kafka itself.
    const { KafkaInspector } = await import('@gw/kafka');
    const kafka = new KafkaInspector(data.kafkaBrokers, data.groupPrefix);
    const ranges = new Map(ends.map(([partition, low, end]) => [partition, { partition, low: BigInt(low), end: BigInt(end) }]));
    await digestDecisionsTopic(kafka, decoder, topic, ranges, async (batch) => {
      post({ type: 'decisions-batch', batch });
      unacked += batch.read;
      // The calling thread is busy with the Postgres pass too: hold the reader, not the memory.
      while (unacked >= MAX_UNACKED_DIGESTS) await new Promise<void>((resolve) => (resumeReader = resolve));
    });
    post({ type: 'decisions-done' });
  } catch (error) {
    post({ type: 'failed', message: error instanceof Error ? error.message : String(error) });
  }
}

function onMessage(request: ReplayWorkerRequest): void {
  switch (request.type) {
    case 'start':
      replay = new ReplayAccumulator(request.scope);
      started = Date.now();
      return;
    case 'batch':
      queue.push(request.batch);
      void drain();
      return;
    case 'end':
      ended = true;
      void drain();
      return;
    case 'decisions':
      void digestDecisions(request.topic, request.ends);
      return;
    case 'ack':
      unacked = Math.max(0, unacked - request.records);
      if (unacked < MAX_UNACKED_DIGESTS && resumeReader) {
        const resume = resumeReader;
        resumeReader = null;
        resume();
      }
      return;
  }
}
// The thread lives until the calling thread ends it (ReplayRunner.stop, or when it has no job left).
port.on('message', onMessage);
post({ type: 'ready' });
