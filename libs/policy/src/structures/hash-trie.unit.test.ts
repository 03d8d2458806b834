import { describe, expect, it } from 'vitest';
import { emptyTrie, hashKey, trieEntries, trieGet, trieSet, trieSweep, type TrieNode } from './hash-trie.ts';

describe('hash trie', () => {
  it('sets and gets thousands of keys, and never changes a trie it was given', () => {
    let trie = emptyTrie<number>();
    const before: Array<TrieNode<number>> = [];
    for (let i = 0; i < 5_000; i += 1) {
      if (i % 1_000 === 0) before.push(JSON.parse(JSON.stringify(trie)) as TrieNode<number>);
      trie = trieSet(trie, `+1415${i}`, i);
    }
    for (let i = 0; i < 5_000; i += 1) expect(trieGet(trie, `+1415${i}`)).toBe(i);
    expect(trieGet(trie, '+14155000')).toBeUndefined();
    expect(trieEntries(trie)).toHaveLength(5_000);
    // Setting the value it already holds returns the very same trie.
    expect(trieSet(trie, '+14150', 0)).toBe(trie);
    expect(trieGet(trieSet(trie, '+14150', 7), '+14150')).toBe(7);
    expect(trieGet(trie, '+14150')).toBe(0);
    expect(trieEntries(before[3]!)).toHaveLength(3_000);
  });

  it('keeps keys whose hashes collide apart, in a bucket sorted by key', () => {
    // Two keys with the same 32-bit hash (found by a birthday search over c0, c1, ...), plus a third.
    const [a, b] = ['c1170850', 'c693596'];
    expect(hashKey(a)).toBe(hashKey(b));
    const trie = trieSet(trieSet(trieSet(emptyTrie<string>(), b, 'b'), a, 'a'), 'other', 'o');
    expect([trieGet(trie, a), trieGet(trie, b), trieGet(trie, 'other')]).toEqual(['a', 'b', 'o']);
    expect(trieSet(trieSet(trieSet(emptyTrie<string>(), 'other', 'o'), a, 'a'), b, 'b')).toEqual(trie);
    expect(trieSweep(trie, (key, value) => (key === a ? undefined : value))).toEqual(trieSet(trieSet(emptyTrie<string>(), b, 'b'), 'other', 'o'));
  });

  it('is canonical: the same entries give the same JSON whatever the order and sweeps that led to them', () => {
    const keys = Array.from({ length: 3_000 }, (_, i) => `k${(i * 7_919) % 3_000}`);
    let forward = emptyTrie<number>();
    for (const key of keys) forward = trieSet(forward, key, Number(key.slice(1)));
    let backward = emptyTrie<number>();
    for (const key of [...keys].reverse()) backward = trieSet(backward, key, Number(key.slice(1)));
    expect(JSON.stringify(backward)).toBe(JSON.stringify(forward));
    const odd = trieSweep(forward, (_key, value) => (value % 2 === 1 ? value : undefined));
    let built = emptyTrie<number>();
    for (let i = 1; i < 3_000; i += 2) built = trieSet(built, `k${i}`, i);
    expect(JSON.stringify(odd)).toBe(JSON.stringify(built));
    expect(trieSweep(forward, (_key, value) => value)).toBe(forward);
    expect(trieSweep(forward, () => undefined)).toEqual(emptyTrie());
    expect(trieSweep(trieSet(trieSet(emptyTrie<number>(), 'x', 1), 'y', 2), (key, value) => (key === 'x' ? value : undefined))).toEqual(trieSet(emptyTrie<number>(), 'x', 1));
  });
});
