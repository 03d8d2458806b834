// The three-node local Kafka cluster (deploy/cluster/kafka-cluster.sh) for the tests that need
// one: started when it is not running, and stopped again by whoever started it.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const run = promisify(execFile);
const SCRIPT = 'deploy/cluster/kafka-cluster.sh';

export interface KafkaCluster {
  brokers: string;
  /** The settings a stack on the cluster runs with: its brokers, three replicas, two in sync. */
  env: Record<string, string>;
  /** Stops the cluster if this call started it. */
  release(): Promise<void>;
}

export async function kafkaCluster(): Promise<KafkaCluster> {
  const running = await run('bash', [SCRIPT, 'status'], { cwd: ROOT }).then(() => true, () => false);
  if (!running) await run('bash', [SCRIPT, 'start'], { cwd: ROOT, timeout: 300_000 });
  const brokers = (await run('bash', [SCRIPT, 'brokers'], { cwd: ROOT })).stdout.trim();
  return {
    brokers,
    env: { KAFKA_BROKERS: brokers, TOPIC_REPLICATION_FACTOR: '3', TOPIC_MIN_INSYNC_REPLICAS: '2' },
    release: async () => {
      if (!running) await run('bash', [SCRIPT, 'stop'], { cwd: ROOT, timeout: 120_000 });
    },
  };
}
