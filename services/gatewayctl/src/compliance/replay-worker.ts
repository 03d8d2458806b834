// Worker thread of verify's replay (started through replay-worker-boot.mjs): builds its own Kafka
// reader and codec from plain settings, replays, and posts the outcome back.
import { parentPort, workerData } from 'node:worker_threads';
import { EventCodec, Topics } from '@gw/events';
import { KafkaInspector } from '@gw/kafka';
import { replayCustomerEvents, type ReplayScope } from './replay-pass.ts';
import type { ComplianceConnection } from './context.ts';

export interface ReplayWorkerData {
  connection: ComplianceConnection;
  topicPrefix: string;
  partitions: number;
  scope: ReplayScope;
}

export type ReplayWorkerMessage =
  | { type: 'progress'; done: number; total: number }
  | { type: 'done'; outcome: Awaited<ReturnType<typeof replayCustomerEvents>> }
  | { type: 'failed'; message: string };

const data = workerData as ReplayWorkerData;
const post = (message: ReplayWorkerMessage) => parentPort!.postMessage(message);
try {
  const kafka = new KafkaInspector(data.connection.kafkaBrokers, data.connection.groupPrefix);
  const codec = new EventCodec(data.connection.schemaRegistryUrl, new Topics(data.topicPrefix, data.partitions));
  let lastProgress = 0;
  const outcome = await replayCustomerEvents(kafka, codec, data.scope, (done, total) => {
    // A message per batch would be noise: a few per second are enough for a progress bar.
    if (Date.now() - lastProgress < 100 && done < total) return;
    lastProgress = Date.now();
    post({ type: 'progress', done, total });
  });
  post({ type: 'done', outcome });
} catch (error) {
  post({ type: 'failed', message: error instanceof Error ? error.message : String(error) });
}
