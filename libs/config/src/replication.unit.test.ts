import { describe, expect, it } from 'vitest';
import { loadConfig } from './index.ts';

describe('topic replication settings', () => {
  it('is one replica on the single local broker', () => {
    expect(loadConfig({}).topicReplication).toEqual({ factor: 1, minInsync: 1 });
  });

  it('on a cluster of three keeps two in sync unless told otherwise', () => {
    expect(loadConfig({ TOPIC_REPLICATION_FACTOR: '3' }).topicReplication).toEqual({ factor: 3, minInsync: 2 });
    expect(loadConfig({ TOPIC_REPLICATION_FACTOR: '3', TOPIC_MIN_INSYNC_REPLICAS: '3' }).topicReplication).toEqual({ factor: 3, minInsync: 3 });
  });

  it('refuses more in-sync replicas than replicas', () => {
    expect(() => loadConfig({ TOPIC_REPLICATION_FACTOR: '2', TOPIC_MIN_INSYNC_REPLICAS: '3' })).toThrow(/cannot exceed/);
  });
});
