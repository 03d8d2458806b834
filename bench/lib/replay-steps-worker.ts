// The worker side of measureReplaySteps (replay-steps.ts): a fresh thread, as verify's replay
// workers are, times the replay's own accumulator over the records it was handed.
import { performance } from 'node:perf_hooks';
import { parentPort, workerData } from 'node:worker_threads';
import { ReplayAccumulator, replayBatch, SyncRecordDecoder, type RecordBatch, type ReplayScope } from '../../services/gatewayctl/src/compliance/index.ts';

const { registryUrl, scope, batches } = workerData as { registryUrl: string; scope: ReplayScope; batches: RecordBatch[] };
const decoder = new SyncRecordDecoder(registryUrl);

/** Best of two runs, in microseconds per record. */
async function perRecord(stopAfter: ReplayScope['stopAfter']): Promise<number> {
  let best = Infinity;
  for (let run = 0; run < 2; run++) {
    const replay = new ReplayAccumulator({ ...scope, ...(stopAfter ? { stopAfter } : {}) });
    const started = performance.now();
    for (const batch of batches) await replayBatch(batch, decoder, replay);
    best = Math.min(best, ((performance.now() - started) * 1000) / Math.max(replay.outcome.read, 1));
  }
  return best;
}

try {
  const decode = await perRecord('decode');
  const decide = await perRecord('decide');
  const full = await perRecord(undefined);
  parentPort!.postMessage({ decode, decide, full });
} catch (error) {
  parentPort!.postMessage({ error: error instanceof Error ? error.message : String(error) });
}
