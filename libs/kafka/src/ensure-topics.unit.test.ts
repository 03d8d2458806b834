import { describe, expect, it } from 'vitest';
import { ensureTopicsOn, type TopicAdmin } from './ensure-topics.ts';

// The broker's answers right after it starts, played back: what Kafka marks retriable is waited
// out; anything else, or too long a wait, fails.
const unknownTopic = () => Object.assign(new Error('This server does not host this topic-partition'), { type: 'UNKNOWN_TOPIC_OR_PARTITION', retriable: true });
const specs = [{ name: 't.a', partitions: 2 }];
const led = (leader: number) => ({ topics: [{ name: 't.a', partitions: [0, 1].map((partitionId) => ({ partitionId, leader, replicas: [1], isr: [1], partitionErrorCode: 0, offlineReplicas: [] })) }] });

function admin(metadata: Array<() => ReturnType<typeof led>>) {
  const calls = { created: 0, metadata: 0 };
  const fake: TopicAdmin = {
    listTopics: async () => (calls.created > 0 ? ['t.a'] : []),
    createTopics: async () => {
      calls.created++;
      return true;
    },
    fetchTopicMetadata: async () => metadata[Math.min(calls.metadata++, metadata.length - 1)]!(),
  };
  return { fake, calls };
}

describe('ensureTopicsOn', () => {
  it('waits out "unknown topic or partition" and leaderless partitions after creating the topics', async () => {
    const { fake, calls } = admin([() => { throw unknownTopic(); }, () => led(-1), () => led(1)]);
    await ensureTopicsOn(fake, specs, { attempts: 5, maxDelayMs: 1 });
    expect(calls).toEqual({ created: 1, metadata: 3 });
  });

  it('fails on an answer that is not retriable, and after too many retriable ones', async () => {
    const denied = admin([() => { throw Object.assign(new Error('Topic authorization failed'), { retriable: false }); }]);
    await expect(ensureTopicsOn(denied.fake, specs, { attempts: 5, maxDelayMs: 1 })).rejects.toThrow('Topic authorization failed');
    const never = admin([() => led(-1)]);
    await expect(ensureTopicsOn(never.fake, specs, { attempts: 3, maxDelayMs: 1 })).rejects.toThrow('no leader yet for t.a/0');
    expect(never.calls.metadata).toBe(3);
  });
});
