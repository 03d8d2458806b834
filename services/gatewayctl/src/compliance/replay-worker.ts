// Worker thread of verify's replay (started through replay-worker-boot.mjs as soon as verify
// starts). It is handed its share of the scope, then the raw records of its partitions as the
// calling thread reads them; it decodes, decides and digests them in order, and posts the outcome
// back once told the records are all there.
import { parentPort, workerData } from 'node:worker_threads';
import { SyncRecordDecoder } from './record-decoder.ts';
import { ReplayAccumulator, replayBatch, type RecordBatch, type ReplayOutcome, type ReplayScope } from './replay-pass.ts';

export interface ReplayWorkerData {
  schemaRegistryUrl: string;
}

/** From the calling thread: the share (once), its records batch by batch, then the end. */
export type ReplayWorkerRequest = { type: 'start'; scope: ReplayScope } | { type: 'batch'; batch: RecordBatch } | { type: 'end' };

export type ReplayWorkerMessage =
  | { type: 'ready' }
  /** After each batch: records replayed so far, and in this batch. */
  | { type: 'progress'; done: number; replayed: number }
  | { type: 'done'; outcome: ReplayOutcome }
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
      port.off('message', onMessage); // nothing more will come: with no listener left the thread ends
    }
  } catch (error) {
    finished = true;
    post({ type: 'failed', message: error instanceof Error ? error.message : String(error) });
  } finally {
    busy = false;
  }
}

function onMessage(request: ReplayWorkerRequest): void {
  if (request.type === 'start') {
    replay = new ReplayAccumulator(request.scope);
    started = Date.now();
    return;
  }
  if (request.type === 'batch') queue.push(request.batch);
  else ended = true;
  void drain();
}
port.on('message', onMessage);
post({ type: 'ready' });
