// verify's replay on a worker thread: the decider is CPU work, and beside it the calling thread
// reads Postgres and the decisions topic (more threads were measured: a third for the decisions
// topic, and the partitions dealt out to one replay thread per core; neither was faster on two
// cores, as each thread loads and compiles its own modules). The worker opens its own
// connections from plain settings, replays (replay-stream.ts: customer-events beside the recorded
// entries, read from Postgres as they are now) and posts its progress and outcome back.
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { createPool } from '@gw/db';
import { EventCodec, Topics } from '@gw/events';
import { KafkaInspector } from '@gw/kafka';
import type { ComplianceConnection } from './deps.ts';
import { replayCustomerEvents, type ReplayOutcome, type ReplayScope } from './replay-stream.ts';

interface Job {
  connection: ComplianceConnection;
  scope: ReplayScope;
}
type Message = { progress: number } | { outcome: ReplayOutcome };

export function replayOnWorkerThread(job: Job, progress: (n: number) => void = () => undefined): Promise<ReplayOutcome> {
  return new Promise((resolve, reject) => {
    // The boot file registers the TypeScript loader in the worker (the CLI runs through tsx).
    const worker = new Worker(new URL('./replay-thread-boot.mjs', import.meta.url), { workerData: job });
    worker.on('message', (message: Message) => {
      if ('progress' in message) progress(message.progress);
      else resolve(message.outcome);
    });
    worker.once('error', reject);
    worker.once('exit', (code) => {
      if (code !== 0) reject(new Error(`the replay thread exited with code ${code}`));
    });
  });
}

// In the worker: run the job and post the outcome.
if (!isMainThread && parentPort && (workerData as Job | undefined)?.scope) {
  const { connection, scope } = workerData as Job;
  const port = parentPort;
  // The codec only decodes (schemas come by the id in each record); topic names are not needed.
  const codec = new EventCodec(connection.schemaRegistryUrl, new Topics('', 1));
  const kafka = new KafkaInspector(connection.kafkaBrokers, connection.groupPrefix);
  const pool = await createPool(connection.databaseUrl, { maxConnections: 1 });
  try {
    const outcome = await replayCustomerEvents(kafka, codec, pool, scope, (n) => port.postMessage({ progress: n } satisfies Message));
    port.postMessage({ outcome } satisfies Message);
  } finally {
    await pool.end();
  }
}
