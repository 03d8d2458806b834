// What each step of verify's replay costs on one thread: records are read once and packed as the
// replay's workers get them, then a fresh worker thread (the replay's own conditions) runs the
// replay's accumulator over them cut short after decoding, after deciding, and whole.
import { Worker } from 'node:worker_threads';
import type { KafkaInspector } from '@gw/kafka';
import { packBatch, toScopeRanges, type RecordBatch, type ReplayScope } from '../../services/gatewayctl/src/compliance/index.ts';

/** Microseconds per record; decide and compare are what each adds to the step before it. */
export interface StepCosts {
  records: number;
  decodeUs: number;
  decideUs: number;
  compareUs: number;
  totalUs: number;
}

const round1 = (value: number) => Math.round(value * 10) / 10;

export async function measureReplaySteps(inspector: KafkaInspector, topic: string, registryUrl: string, limit = 100_000): Promise<StepCosts> {
  const ends = await inspector.endOffsets(topic);
  const batches: RecordBatch[] = [];
  let records = 0;
  await inspector.readToEnd(topic, {
    ends,
    concurrency: 1,
    onBatch: async (batch, partition) => {
      if (records >= limit) return;
      batches.push(packBatch(batch, partition));
      records += batch.length;
    },
  });
  const scope: ReplayScope = { topic, ends: toScopeRanges(ends), committed: [...ends.keys()].map((partition) => [partition, null]), customers: null };
  const worker = new Worker(new URL('./replay-steps-boot.mjs', import.meta.url), {
    workerData: { registryUrl, scope, batches },
    transferList: batches.flatMap((b) => [b.values, b.types.buffer as ArrayBuffer, b.lengths.buffer as ArrayBuffer]),
    // As the replay's workers run (replay-pass.ts).
    resourceLimits: { maxYoungGenerationSizeMb: 96 },
  });
  try {
    const result = await new Promise<{ decode: number; decide: number; full: number; error?: string }>((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
      worker.once('exit', (code) => reject(new Error(`the replay-steps worker exited with code ${code}`)));
    });
    if (result.error) throw new Error(`replay steps: ${result.error}`);
    return { records, decodeUs: round1(result.decode), decideUs: round1(result.decide - result.decode), compareUs: round1(result.full - result.decide), totalUs: round1(result.full) };
  } finally {
    await worker.terminate();
  }
}
