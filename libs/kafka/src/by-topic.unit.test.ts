import { describe, expect, it } from 'vitest';
import { ItemFailed } from '@gw/batching';
import { byTopic, sendByTopic } from './client.ts';
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

describe('sendByTopic', () => {
  it('answers per record: a failed chunk fails its records and its topic\'s later chunks, and nothing else', async () => {
    const records = [record('a', 300_000, 'a1'), record('b', 10, 'b1'), record('a', 300_000, 'a2'), record('c', 10, 'c1')];
    const sent: string[] = [];
    const results = await sendByTopic(records, async (chunk) => {
      const keys = chunk.messages.map((m) => m.key).join(',');
      if (keys === 'b1') throw new Error('leader of b not available');
      sent.push(keys);
    });
    expect(sent).toEqual(['a1', 'a2', 'c1']);
    expect(results.map((r) => (r instanceof ItemFailed ? 'failed' : 'sent'))).toEqual(['sent', 'failed', 'sent', 'sent']);

    const cut = await sendByTopic(records, async (chunk) => {
      if (chunk.messages[0]!.key === 'a1') throw new Error('a down');
    });
    // a2 is not tried after a1 failed: it would have landed ahead of it.
    expect(cut.map((r) => (r instanceof ItemFailed ? 'failed' : 'sent'))).toEqual(['failed', 'sent', 'failed', 'sent']);
  });
});
