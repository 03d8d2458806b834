import { describe, expect, it } from 'vitest';
import { BatchAbandoned, processBatch, type BatchControl, type StageFaults } from './stage-runner.ts';
import type { ConsumedRecord, OutgoingRecord } from './types.ts';

const record = (offset: number, value = `v${offset}`): ConsumedRecord => ({
  topic: 'in',
  partition: 0,
  offset: String(offset),
  key: 'cus_1',
  value: Buffer.from(value),
  headers: {},
  timestamp: '0',
});

const out = (r: ConsumedRecord): OutgoingRecord => ({ topic: 'out', key: r.key ?? '', value: r.value! });

class Transient extends Error {}
class Poison extends Error {}

/** A partition's batch run against recorded commits, with a clock that does not wait. */
function harness(options: { active?: () => boolean; commitFails?: number } = {}) {
  const commits: Array<{ values: string[]; next: string }> = [];
  const resolved: string[] = [];
  const slept: number[] = [];
  const deadLetters: string[] = [];
  let heartbeats = 0;
  let commitFailures = options.commitFails ?? 0;
  const control: BatchControl = {
    topic: 'in',
    partition: 0,
    heartbeat: async () => void heartbeats++,
    isActive: options.active ?? (() => true),
    commit: async (outputs, next) => {
      if (commitFailures > 0) {
        commitFailures--;
        throw new Transient('broker away');
      }
      commits.push({ values: outputs.map((o) => o.value.toString()), next });
    },
    resolveOffset: (offset) => void resolved.push(offset),
    sleep: async (ms) => void slept.push(ms),
  };
  const faults: StageFaults = {
    isTransient: (error) => error instanceof Transient,
    maxTries: 3,
    deadLetter: async (r, failure) => [{ topic: 'dlq', key: r.key ?? '', value: Buffer.from(`dead ${r.offset} after ${failure.tries}: ${(failure.error as Error).message}`) }],
    onDeadLettered: (r) => void deadLetters.push(r.offset),
    backoffMs: (retry) => retry,
  };
  return { commits, resolved, slept, deadLetters, control, faults, heartbeats: () => heartbeats };
}

describe('processBatch', () => {
  it('given a batch that transforms, commits its outputs with the offset after its last record, once', async () => {
    const h = harness();
    await processBatch([record(0), record(1), record(2)], async (records) => records.map(out), h.faults, h.control);
    expect(h.commits).toEqual([{ values: ['v0', 'v1', 'v2'], next: '3' }]);
    expect(h.resolved).toEqual(['2']);
    expect(h.deadLetters).toEqual([]);
  });

  it('given a poison record mid-batch, commits the others one by one in order and dead-letters it after its tries', async () => {
    const h = harness();
    const tried: string[] = [];
    const transform = async (records: ConsumedRecord[]) => {
      tried.push(records.map((r) => r.offset).join(','));
      if (records.some((r) => r.value!.toString() === 'bad')) throw new Poison('cannot map');
      return records.map(out);
    };
    await processBatch([record(0), record(1, 'bad'), record(2)], transform, h.faults, h.control);
    expect(h.commits).toEqual([
      { values: ['v0'], next: '1' },
      { values: ['dead 1 after 3: cannot map'], next: '2' },
      { values: ['v2'], next: '3' },
    ]);
    expect(tried).toEqual(['0,1,2', '0', '1', '1', '1', '2']);
    expect(h.resolved).toEqual(['0', '1', '2']);
    expect(h.deadLetters).toEqual(['1']);
  });

  it('given a single-record batch that keeps failing, dead-letters it after exactly maxTries tries', async () => {
    const h = harness();
    let tries = 0;
    await processBatch([record(7)], async () => {
      tries++;
      throw new Poison('no');
    }, h.faults, h.control);
    expect(tries).toBe(3);
    expect(h.commits).toEqual([{ values: ['dead 7 after 3: no'], next: '8' }]);
  });

  it('given transient failures, retries the whole batch with backoff and heartbeats until it goes through: nothing is dead-lettered', async () => {
    const h = harness();
    let failures = 5;
    await processBatch([record(0), record(1)], async (records) => {
      if (failures-- > 0) throw new Transient('database away');
      return records.map(out);
    }, h.faults, h.control);
    expect(h.commits).toEqual([{ values: ['v0', 'v1'], next: '2' }]);
    expect(h.slept).toEqual([1, 2, 3, 4, 5]);
    expect(h.heartbeats()).toBe(5);
    expect(h.deadLetters).toEqual([]);
  });

  it('given transient failures between the tries of a record on its own, does not count them as tries', async () => {
    const h = harness();
    const script = ['poison', 'transient', 'transient', 'transient', 'transient', 'ok'];
    await processBatch([record(0), record(1)], async (records) => {
      const step = records.length > 1 ? 'poison' : script.shift();
      if (step === 'poison') throw new Poison('batch');
      if (step === 'transient') throw new Transient('away');
      return records.map(out);
    }, h.faults, h.control);
    expect(h.deadLetters).toEqual([]);
    expect(h.commits.map((c) => c.values)).toEqual([['v0'], ['v1']]);
  });

  it('given a commit that fails while the broker is away, retries the commit without transforming again', async () => {
    const h = harness({ commitFails: 2 });
    let transforms = 0;
    await processBatch([record(0), record(1)], async (records) => {
      transforms++;
      return records.map(out);
    }, h.faults, h.control);
    expect(transforms).toBe(1);
    expect(h.commits).toEqual([{ values: ['v0', 'v1'], next: '2' }]);
  });

  it('given a consumer that stops while the infrastructure is away, gives the batch up without committing', async () => {
    let active = 3;
    const h = harness({ active: () => active-- > 0 });
    await expect(processBatch([record(0), record(1)], async () => {
      throw new Transient('away');
    }, h.faults, h.control)).rejects.toBeInstanceOf(BatchAbandoned);
    expect(h.commits).toEqual([]);
    expect(h.resolved).toEqual([]);
  });
});
