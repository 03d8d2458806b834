import { describe, expect, it } from 'vitest';
import { byTopic } from './client.ts';
import type { OutgoingRecord } from './types.ts';

const record = (topic: string, bytes: number, key = 'k'): OutgoingRecord => ({ topic, key, value: Buffer.alloc(bytes) });

describe('byTopic', () => {
  it('keeps order per topic and splits a topic whose records exceed one produce request', () => {
    const records = [record('a', 300_000), record('b', 10), record('a', 300_000, 'k2'), record('a', 10, 'k3')];
    const chunks = byTopic(records);
    expect(chunks.map((c) => [c.topic, c.messages.map((m) => m.key)])).toEqual([
      ['a', ['k']],
      ['b', ['k']],
      ['a', ['k2', 'k3']],
    ]);
  });

  it('never leaves an empty chunk, even for a record larger than the chunk size', () => {
    const chunks = byTopic([record('a', 2_000_000), record('a', 10)]);
    expect(chunks.map((c) => c.messages.length)).toEqual([1, 1]);
  });
});
