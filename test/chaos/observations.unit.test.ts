import { describe, expect, it } from 'vitest';
import type { MessageRecord } from './clients.ts';
import { lagAroundFaults, latencyByPhase, parseLag, takenOver, type Assignment, type LagSample } from './observations.ts';

const sample = (at: number, total: number): LagSample => ({ at, total, byGroup: { g: total } });

describe('what the fault suite observes', () => {
  it('reads the lag of every partition from a /metrics page', () => {
    const lags = parseLag([
      '# HELP gateway_consumer_lag Records between the consumer position and the partition high watermark',
      'gateway_consumer_lag{group="gw.policy",topic="gw.customer-events.v1",partition="0",service="policy"} 12',
      'gateway_consumer_lag{group="gw.policy",topic="gw.customer-events.v1",partition="1",service="policy"} 0',
      'gateway_events_processed_total{group="gw.policy",topic="t",outcome="ok"} 99',
    ].join('\n'));
    expect([...lags.entries()]).toEqual([
      ['gw.policy/gw.customer-events.v1/0', { group: 'gw.policy', lag: 12 }],
      ['gw.policy/gw.customer-events.v1/1', { group: 'gw.policy', lag: 0 }],
    ]);
  });

  it('gives each fault the lag before it, its peak until the next fault, and when it was back', () => {
    // A quiet sample between the fault and the peak is not "back": the lag had not risen yet.
    const samples = [sample(0, 3), sample(1_000, 4), sample(1_800, 4), sample(2_000, 50), sample(3_000, 200), sample(4_000, 30), sample(5_000, 4), sample(9_000, 90), sample(10_000, 2)];
    const windows = [{ fault: 'broker', began: 1_500, ready: 3_500 }, { fault: 'stage', began: 8_500, ready: 9_500 }];
    expect(lagAroundFaults(samples, windows)).toEqual([
      { fault: 'broker', before: 4, peak: 200, back_after_s: 3.5 },
      { fault: 'stage', before: 30, peak: 90, back_after_s: 1.5 },
    ]);
  });

  it('says "never" when the lag did not come back before the next fault', () => {
    const samples = [sample(0, 0), sample(1_000, 500), sample(2_000, 400)];
    expect(lagAroundFaults(samples, [{ fault: 'broker', began: 500, ready: 1_500 }])[0]!.back_after_s).toBeNull();
  });

  it('splits answer latency by the phase in which each message began', () => {
    const record = (startedAt: number, elapsedMs: number | null) => ({ startedAt, elapsedMs }) as MessageRecord;
    const records = [record(0, 100), record(10, 300), record(1_000, 5_000), record(1_200, 7_000), record(1_300, null), record(9_000, 50)];
    const phases = latencyByPhase(records, [{ fault: 'broker', began: 900, ready: 2_000 }]);
    expect(phases).toEqual([
      { phase: 'before the first fault', messages: 2, p50_ms: 300, p99_ms: 300, max_ms: 300 },
      { phase: 'during: broker', messages: 2, p50_ms: 7_000, p99_ms: 7_000, max_ms: 7_000 },
    ]);
  });

  it('sees a killed process\'s partitions taken over only once the survivors hold every one of them', () => {
    const at = (t: number, process: Assignment['process'], group: string, partitions: number[]): Assignment => ({ at: t, process, group, partitions: partitions.length, held: partitions.map((p) => `${group}.v1:${p}`) });
    const before = [at(0, 'policy', 'policy', [0, 1, 2, 3, 4, 5]), at(1, 'policy#1', 'policy', [3, 4, 5]), at(1, 'policy', 'policy', [0, 1, 2]), at(1, 'webhooks', 'webhooks', [0, 1, 2, 3, 4, 5])];
    // Killed at t=10: the survivor still holds only its half, and a rebalance the dead member had already joined gives it the same half again.
    expect(takenOver(before, ['policy'], 10)).toBe(false);
    expect(takenOver([...before, at(11, 'policy#1', 'policy', [3, 4, 5])], ['policy'], 10)).toBe(false);
    expect(takenOver([...before, at(11, 'policy#1', 'policy', [3, 4, 5]), at(20, 'policy#1', 'policy', [0, 1, 2, 3, 4, 5])], ['policy'], 10)).toBe(true);
    // A group the killed processes were not in is not waited for; a group with no survivor never is taken over.
    expect(takenOver([...before, at(20, 'policy#1', 'policy', [0, 1, 2, 3, 4, 5])], ['policy', 'webhooks'], 10)).toBe(false);
    // The killed process's own lines do not count.
    expect(takenOver([...before, at(20, 'policy', 'policy', [0, 1, 2, 3, 4, 5])], ['policy'], 10)).toBe(false);
  });

  it('is not misled by the stale line of a process that had already left its group', () => {
    const at = (t: number, process: Assignment['process'], partitions: number[]): Assignment => ({ at: t, process, group: 'outcomes', partitions: partitions.length, held: partitions.map((p) => `outcomes.v1:${p}`) });
    // instance-events left the group in a broker fault (no line); its partner took all six at t=5.
    const lines = [at(0, 'instance-events', [0, 1, 2]), at(0, 'instance-events#1', [3, 4, 5]), at(5, 'instance-events#1', [0, 1, 2, 3, 4, 5])];
    expect(takenOver(lines, ['instance-events'], 10)).toBe(true);
  });
});
