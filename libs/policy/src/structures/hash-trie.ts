/**
 * A persistent hash map in plain JSON (a hash array mapped trie): the state keeps per-key memories
 * that a rule reads once per decision (the last send per instance and recipient, the recipients of
 * a body), and evolve must not copy a whole map to change one key. A set copies only the nodes on
 * the key's path (at most seven, of at most 32 slots each), so a fold is O(log n) and the old trie
 * stays valid for whoever still holds it: evolve never mutates its input.
 *
 * Why not a library: the state is snapshotted as jsonb and replayed, so it must be plain JSON that
 * compares deep-equal whatever path built it; the persistent-collection libraries keep class
 * instances. The shape is canonical: the same entries give the same JSON whatever order they came
 * in (collision buckets are sorted by key, and a sweep lifts a lone entry back into its parent).
 */

/** A node: `m` marks which of its 32 slots are used; `s` holds them in slot order, each an entry or a child node. */
export interface TrieNode<V> {
  m: number;
  s: Array<TrieSlot<V>>;
}
export type TrieEntry<V> = [key: string, value: V];
export type TrieSlot<V> = TrieEntry<V> | TrieNode<V>;

const BITS = 5;
const MASK = 31;
/** Below this depth the 32-bit hash is used up: keys that share it wait in a bucket sorted by key. */
const BUCKET_SHIFT = 30;

export const emptyTrie = <V>(): TrieNode<V> => ({ m: 0, s: [] });

/** FNV-1a over the UTF-16 units, then murmur3's finaliser so that keys differing only at the end spread over every level. */
export function hashKey(key: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i += 1) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

function popcount(x: number): number {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  return (Math.imul((x + (x >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24) & 0xff;
}

const isEntry = <V>(slot: TrieSlot<V>): slot is TrieEntry<V> => Array.isArray(slot);

/** The value of `key`, or undefined. */
export function trieGet<V>(trie: TrieNode<V>, key: string): V | undefined {
  const hash = hashKey(key);
  let node = trie;
  for (let shift = 0; shift < BUCKET_SHIFT; shift += BITS) {
    const bit = 1 << ((hash >>> shift) & MASK);
    if ((node.m & bit) === 0) return undefined;
    const slot = node.s[popcount(node.m & (bit - 1))]!;
    if (isEntry(slot)) return slot[0] === key ? slot[1] : undefined;
    node = slot;
  }
  for (const entry of node.s as Array<TrieEntry<V>>) if (entry[0] === key) return entry[1];
  return undefined;
}

/** The trie with `key` set to `value` (the same trie when it already held that very value). */
export function trieSet<V>(trie: TrieNode<V>, key: string, value: V): TrieNode<V> {
  return setIn(trie, key, hashKey(key), value, 0);
}

function setIn<V>(node: TrieNode<V>, key: string, hash: number, value: V, shift: number): TrieNode<V> {
  if (shift >= BUCKET_SHIFT) return setInBucket(node, key, value);
  const bit = 1 << ((hash >>> shift) & MASK);
  const index = popcount(node.m & (bit - 1));
  if ((node.m & bit) === 0) {
    const s = node.s.slice();
    s.splice(index, 0, [key, value]);
    return { m: node.m | bit, s };
  }
  const slot = node.s[index]!;
  let next: TrieSlot<V>;
  if (isEntry(slot)) {
    if (slot[0] === key) {
      if (slot[1] === value) return node;
      next = [key, value];
    } else {
      // Two keys in one slot: a child node holds both, one level down.
      next = setIn(setIn(emptyTrie<V>(), slot[0], hashKey(slot[0]), slot[1], shift + BITS), key, hash, value, shift + BITS);
    }
  } else {
    next = setIn(slot, key, hash, value, shift + BITS);
    if (next === slot) return node;
  }
  const s = node.s.slice();
  s[index] = next;
  return { m: node.m, s };
}

function setInBucket<V>(bucket: TrieNode<V>, key: string, value: V): TrieNode<V> {
  const entries = bucket.s as Array<TrieEntry<V>>;
  let index = 0;
  while (index < entries.length && entries[index]![0] < key) index += 1;
  const found = entries[index];
  if (found && found[0] === key && found[1] === value) return bucket;
  const s = entries.slice();
  if (found && found[0] === key) s[index] = [key, value];
  else s.splice(index, 0, [key, value]);
  return { m: 0, s };
}

/**
 * The trie with every entry passed through `keep`: the value it returns is kept (the very same
 * value keeps the entry as it is), undefined drops the entry. Nodes nothing changed in are shared.
 * O(n): for the hourly sweeps that forget what is past its retention.
 */
export function trieSweep<V>(trie: TrieNode<V>, keep: (key: string, value: V) => V | undefined): TrieNode<V> {
  const swept = sweepNode(trie, keep, 0);
  if (swept === undefined) return emptyTrie();
  // The root stays a node: a lone entry lifted out of it goes back in its slot.
  return isEntry(swept) ? setIn(emptyTrie<V>(), swept[0], hashKey(swept[0]), swept[1], 0) : swept;
}

function sweepNode<V>(node: TrieNode<V>, keep: (key: string, value: V) => V | undefined, shift: number): TrieSlot<V> | undefined {
  // The kept slots are copied only from the first slot that changes: most nodes of a sweep keep
  // every slot, and a copy per node was most of a sweep's garbage (issue 29).
  let s: Array<TrieSlot<V>> | undefined;
  let m = 0;
  let bits = node.m;
  for (let index = 0; index < node.s.length; index += 1) {
    const slot = node.s[index]!;
    const bit = bits & -bits;
    bits &= bits - 1;
    let next: TrieSlot<V> | undefined;
    if (isEntry(slot)) {
      const value = keep(slot[0], slot[1]);
      next = value === undefined ? undefined : value === slot[1] ? slot : [slot[0], value];
    } else {
      next = sweepNode(slot, keep, shift + BITS);
    }
    if (next !== slot && s === undefined) {
      s = node.s.slice(0, index);
      m = node.m & (bit - 1); // the slots before this one: the bits below its own
    }
    if (s !== undefined && next !== undefined) {
      s.push(next);
      m |= bit;
    }
  }
  if (s === undefined) return node;
  if (s.length === 0) return undefined;
  // A lone entry moves up to its parent's slot, as set would have placed it (the shape stays canonical).
  if (s.length === 1 && isEntry(s[0]!)) return s[0];
  return { m: shift >= BUCKET_SHIFT ? 0 : m, s };
}

/** Every entry, in the trie's order (tests and the snapshot-size figures). */
export function trieEntries<V>(trie: TrieNode<V>): Array<TrieEntry<V>> {
  const out: Array<TrieEntry<V>> = [];
  const walk = (node: TrieNode<V>): void => {
    for (const slot of node.s) if (isEntry(slot)) out.push(slot);
    else walk(slot);
  };
  walk(trie);
  return out;
}
