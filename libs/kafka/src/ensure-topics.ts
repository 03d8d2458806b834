// Making sure topics exist before a service uses them. Right after a broker starts, or while
// another service creates the same topics, the broker answers "unknown topic or partition" or
// "leader not available" for a moment. kafkajs's own wait (createTopics with waitForLeaders)
// gives up on the first, which once ended a starting service; so the wait for leaders is done
// here, repeating what Kafka marks retriable (retriable.ts).
import type { Admin } from 'kafkajs';
import { DEFAULT_PATIENCE, retryRetriable, type Patience } from './retriable.ts';
import type { TopicSpec } from './types.ts';

export type TopicAdmin = Pick<Admin, 'listTopics' | 'createTopics' | 'fetchTopicMetadata'>;

/** Creates the missing topics, and returns once every partition of every topic has a leader. */
export async function ensureTopicsOn(admin: TopicAdmin, specs: TopicSpec[], patience: Patience = DEFAULT_PATIENCE): Promise<void> {
  await retryRetriable(async () => {
    const existing = new Set(await admin.listTopics());
    const missing = specs.filter((s) => !existing.has(s.name));
    if (missing.length > 0) {
      await admin.createTopics({
        waitForLeaders: false,
        topics: missing.map((s) => ({
          topic: s.name,
          numPartitions: s.partitions,
          replicationFactor: s.replicationFactor ?? 1,
          configEntries: Object.entries(s.config ?? {}).map(([name, value]) => ({ name, value })),
        })),
      });
    }
    const { topics } = await admin.fetchTopicMetadata({ topics: specs.map((s) => s.name) });
    const leaderless = topics.flatMap((t) => t.partitions.filter((p) => p.leader < 0).map((p) => `${t.name}/${p.partitionId}`));
    if (leaderless.length > 0) throw Object.assign(new Error(`no leader yet for ${leaderless.slice(0, 3).join(', ')}`), { retriable: true });
  }, patience);
}
