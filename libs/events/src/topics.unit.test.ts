import { describe, expect, it } from 'vitest';
import { Topics } from './topics.ts';

describe('topic specs', () => {
  it('carry the replication the cluster asks for, on every topic', () => {
    const specs = new Topics('gw.', 6, { factor: 3, minInsync: 2 }).specs();
    expect(specs.length).toBeGreaterThan(0);
    for (const spec of specs) {
      expect(spec).toMatchObject({ partitions: 6, replicationFactor: 3 });
      expect(spec.config).toMatchObject({ 'min.insync.replicas': '2', 'retention.ms': '-1' });
    }
  });

  it('default to one replica (the single local broker)', () => {
    for (const spec of new Topics('gw.', 6).specs()) expect(spec).toMatchObject({ replicationFactor: 1, config: { 'min.insync.replicas': '1' } });
  });
});
