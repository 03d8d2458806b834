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
 *
 * Shape (state version 7): a node is one array, its bitmap first, then its slots; an entry is an
 * object `{ k, v }`. Version 6 had `{ m, s }` nodes and `[key, value]` entries: two allocations
 * each where one does, and a fold writes a few nodes and entries per accepted send (issue 29).
 */

/** A node: element 0 marks which of its 32 slots are used; the elements after it hold them in slot order, each an entry or a child node. */
export interface TrieNode<V> extends Array<number | TrieSlot<V>> {
  0: number;
}
export interface TrieEntry<V> {
  k: string;
  v: V;
}
export type TrieSlot<V> = TrieEntry<V> | TrieNode<V>;

const BITS = 5;
const MASK = 31;
/** Below this depth the 32-bit hash is used up: keys that share it wait in a bucket (bitmap 0) sorted by key. */
const BUCKET_SHIFT = 30;

export const emptyTrie = <V>(): TrieNode<V> => [0] as TrieNode<V>;

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

const isEntry = <V>(slot: TrieSlot<V>): slot is TrieEntry<V> => !Array.isArray(slot);

/** The value of `key`, or undefined. */
export function trieGet<V>(trie: TrieNode<V>, key: string): V | undefined {
  const hash = hashKey(key);
  let node = trie;
  for (let shift = 0; shift < BUCKET_SHIFT; shift += BITS) {
    const m = node[0];
    const bit = 1 << ((hash >>> shift) & MASK);
    if ((m & bit) === 0) return undefined;
    const slot = node[1 + popcount(m & (bit - 1))] as TrieSlot<V>;
    if (isEntry(slot)) return slot.k === key ? slot.v : undefined;
    node = slot;
  }
  for (let index = 1; index < node.length; index += 1) {
    const entry = node[index] as TrieEntry<V>;
    if (entry.k === key) return entry.v;
  }
  return undefined;
}

/** The trie with `key` set to `value` (the same trie when it already held that very value). */
export function trieSet<V>(trie: TrieNode<V>, key: string, value: V): TrieNode<V> {
  return setIn(trie, key, hashKey(key), value, 0);
}

/**
 * The trie with `key` set to what `update` makes of its value (undefined when it has none), in
 * one walk: the same trie when `update` returns undefined or the very value it was given. A read
 * then a set walked the key's path twice, and evolve does it for each accepted send (issue 29).
 */
export function trieUpdate<V>(trie: TrieNode<V>, key: string, update: (previous: V | undefined) => V | undefined): TrieNode<V> {
  return updateIn(trie, key, hashKey(key), update, 0);
}

function setIn<V>(node: TrieNode<V>, key: string, hash: number, value: V, shift: number): TrieNode<V> {
  return updateIn(node, key, hash, () => value, shift);
}

function updateIn<V>(node: TrieNode<V>, key: string, hash: number, update: (previous: V | undefined) => V | undefined, shift: number): TrieNode<V> {
  if (shift >= BUCKET_SHIFT) return updateInBucket(node, key, update);
  const m = node[0];
  const bit = 1 << ((hash >>> shift) & MASK);
  const index = 1 + popcount(m & (bit - 1));
  if ((m & bit) === 0) {
    const value = update(undefined);
    if (value === undefined) return node;
    const next = node.slice() as TrieNode<V>;
    next.splice(index, 0, { k: key, v: value });
    next[0] = m | bit;
    return next;
  }
  const slot = node[index] as TrieSlot<V>;
  let replacement: TrieSlot<V>;
  if (isEntry(slot)) {
    if (slot.k === key) {
      const value = update(slot.v);
      if (value === undefined || value === slot.v) return node;
      replacement = { k: key, v: value };
    } else {
      const value = update(undefined);
      if (value === undefined) return node;
      // Two keys in one slot: a child node holds both, one level down.
      replacement = setIn(setIn(emptyTrie<V>(), slot.k, hashKey(slot.k), slot.v, shift + BITS), key, hash, value, shift + BITS);
    }
  } else {
    replacement = updateIn(slot, key, hash, update, shift + BITS);
    if (replacement === slot) return node;
  }
  const next = node.slice() as TrieNode<V>;
  next[index] = replacement;
  return next;
}

function updateInBucket<V>(bucket: TrieNode<V>, key: string, update: (previous: V | undefined) => V | undefined): TrieNode<V> {
  let index = 1;
  while (index < bucket.length && (bucket[index] as TrieEntry<V>).k < key) index += 1;
  const found = bucket[index] as TrieEntry<V> | undefined;
  const here = found !== undefined && found.k === key;
  const value = update(here ? found.v : undefined);
  if (value === undefined || (here && found.v === value)) return bucket;
  const next = bucket.slice() as TrieNode<V>;
  if (here) next[index] = { k: key, v: value };
  else next.splice(index, 0, { k: key, v: value });
  return next;
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
  return isEntry(swept) ? setIn(emptyTrie<V>(), swept.k, hashKey(swept.k), swept.v, 0) : swept;
}

function sweepNode<V>(node: TrieNode<V>, keep: (key: string, value: V) => V | undefined, shift: number): TrieSlot<V> | undefined {
  // The kept slots are copied only from the first slot that changes: most nodes of a sweep keep
  // every slot, and a copy per node was most of a sweep's garbage (issue 29).
  let kept: TrieNode<V> | undefined;
  let bits = node[0];
  for (let index = 1; index < node.length; index += 1) {
    const slot = node[index] as TrieSlot<V>;
    const bit = bits & -bits;
    bits &= bits - 1;
    let next: TrieSlot<V> | undefined;
    if (isEntry(slot)) {
      const value = keep(slot.k, slot.v);
      next = value === undefined ? undefined : value === slot.v ? slot : { k: slot.k, v: value };
    } else {
      next = sweepNode(slot, keep, shift + BITS);
    }
    if (next !== slot && kept === undefined) {
      kept = node.slice(0, index) as TrieNode<V>;
      kept[0] = node[0] & (bit - 1); // the slots before this one: the bits below its own
    }
    if (kept !== undefined && next !== undefined) {
      kept.push(next);
      kept[0] |= bit;
    }
  }
  if (kept === undefined) return node;
  if (kept.length === 1) return undefined;
  // A lone entry moves up to its parent's slot, as set would have placed it (the shape stays canonical).
  if (kept.length === 2 && isEntry(kept[1] as TrieSlot<V>)) return kept[1] as TrieEntry<V>;
  if (shift >= BUCKET_SHIFT) kept[0] = 0;
  return kept;
}

/** Every entry as [key, value], in the trie's order (tests, upgrades and the snapshot-size figures). */
export function trieEntries<V>(trie: TrieNode<V>): Array<[key: string, value: V]> {
  const out: Array<[string, V]> = [];
  const walk = (node: TrieNode<V>): void => {
    for (let index = 1; index < node.length; index += 1) {
      const slot = node[index] as TrieSlot<V>;
      if (isEntry(slot)) out.push([slot.k, slot.v]);
      else walk(slot);
    }
  };
  walk(trie);
  return out;
}

/** Version 6's shape of a trie: `{ m, s }` nodes and `[key, value]` entries (the same positions as now). */
export interface TrieNodeV6<V> {
  m: number;
  s: Array<[key: string, value: V] | TrieNodeV6<V>>;
}

/** Every entry of a version-6 trie, as [key, value] (for upgrading a stored snapshot). */
export function trieEntriesV6<V>(trie: TrieNodeV6<V>): Array<[key: string, value: V]> {
  const out: Array<[string, V]> = [];
  const walk = (node: TrieNodeV6<V>): void => {
    for (const slot of node.s) if (Array.isArray(slot)) out.push(slot);
    else walk(slot);
  };
  walk(trie);
  return out;
}
