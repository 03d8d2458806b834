import { RETENTION } from './config/policy-config.ts';
import type { InstanceGuard } from './guard/state.ts';
import type { QualityBucket } from './state.ts';
import { emptyTrie, trieEntries, trieGet, trieSet, trieSweep, trieUpdate, type TrieNode } from './structures/hash-trie.ts';
import type { BucketLevel } from './time/token-bucket.ts';

const HOUR_MS = 3_600_000;

/**
 * What the engine keeps of one instance (state version 8), in one record: an accepted send changes
 * the bucket and the quality counters of its instance, and a first contact its guard. Version 7 kept
 * them in three maps keyed by instance (`buckets`, `quality`, `guard.instances`), and each accepted
 * send copied two or three of them whole: past 16 instances they are dictionary-mode objects, and a
 * copy cost ~1 µs at 20 instances and tens of µs at 200 (issue 29). Each field is null when the
 * engine keeps nothing of it, so every record has one shape (and the JSON one form).
 */
export interface InstanceState {
  /** The token bucket's level at its `at`; null: full (never sent, or idle past RETENTION.idleBucketMs). */
  bucket: BucketLevel | null;
  /** Hourly quality buckets, oldest first; null: none within RETENTION.qualityHours, or reset by a resume. */
  quality: QualityBucket[] | null;
  /** The number guard of the instance (guard/state.ts); null: the guard was told nothing of it. */
  guard: InstanceGuard | null;
}

/**
 * Instance → its record, in a persistent hash trie (structures/hash-trie.ts): a change copies the
 * one or two small nodes on the instance's path. An instance the engine keeps nothing of has no
 * entry, so the same facts give the same trie whatever path built it.
 */
export type Instances = TrieNode<InstanceState>;

export const emptyInstances = (): Instances => emptyTrie();

const NOTHING: InstanceState = Object.freeze({ bucket: null, quality: null, guard: null }) as InstanceState;

/** The instance's record, or undefined when the engine keeps nothing of it. */
export const instanceOf = (instances: Instances, instanceId: string): InstanceState | undefined => trieGet(instances, instanceId);

/** The instance's bucket level as last folded; undefined: full. */
export const bucketOf = (instances: Instances, instanceId: string): BucketLevel | undefined => trieGet(instances, instanceId)?.bucket ?? undefined;

/** The instance's hourly quality buckets, oldest first; undefined: none. */
export const qualityOf = (instances: Instances, instanceId: string): QualityBucket[] | undefined => trieGet(instances, instanceId)?.quality ?? undefined;

/** The instance's number guard; undefined: the guard was told nothing of it. */
export const guardOf = (instances: Instances, instanceId: string): InstanceGuard | undefined => trieGet(instances, instanceId)?.guard ?? undefined;

const isEmpty = (instance: InstanceState): boolean => instance.bucket === null && instance.quality === null && instance.guard === null;

/**
 * The instances with what `change` makes of one record (an instance without one is given an
 * empty record); the same trie when `change` returns the record it was given. A record left
 * empty is dropped (rare: a resume that clears the quality of an instance that never sent; the
 * trie has no single-key removal, so it is swept, O(instances)).
 */
export function updateInstance(instances: Instances, instanceId: string, change: (instance: InstanceState) => InstanceState): Instances {
  let emptied = false;
  const next = trieUpdate(instances, instanceId, (current) => {
    const changed = change(current ?? NOTHING);
    if (changed === current || changed === NOTHING) return undefined;
    if (isEmpty(changed)) {
      emptied = true;
      return undefined;
    }
    return changed;
  });
  return emptied ? trieSweep(instances, (key, instance) => (key === instanceId ? undefined : instance)) : next;
}

/**
 * The hourly prune of evolve at `clock`: buckets idle past RETENTION.idleBucketMs and quality
 * buckets past RETENTION.qualityHours are dropped (the same bounds as version 7's maps), and a
 * record left empty with them. A record nothing changed in is kept as it is.
 */
export function pruneInstances(instances: Instances, clock: number): Instances {
  const bucketAfter = clock - RETENTION.idleBucketMs;
  const hourAfter = clock - RETENTION.qualityHours * HOUR_MS;
  return trieSweep(instances, (_id, instance) => {
    const bucket = instance.bucket !== null && instance.bucket.at > bucketAfter ? instance.bucket : null;
    let quality = instance.quality;
    if (quality !== null && (quality.length === 0 || !quality.every((b) => b.hour > hourAfter))) {
      const kept = quality.filter((b) => b.hour > hourAfter);
      quality = kept.length > 0 ? kept : null;
    }
    if (bucket === instance.bucket && quality === instance.quality) return instance;
    const next = { bucket, quality, guard: instance.guard };
    return isEmpty(next) ? undefined : next;
  });
}

/** The records from version 7's three maps (the upgrade, and tests that build a state by hand). */
export function instancesFrom(parts: {
  buckets?: Record<string, BucketLevel>;
  quality?: Record<string, QualityBucket[]>;
  guards?: Record<string, InstanceGuard>;
}): Instances {
  const { buckets = {}, quality = {}, guards = {} } = parts;
  let instances = emptyInstances();
  for (const id of new Set([...Object.keys(buckets), ...Object.keys(quality), ...Object.keys(guards)])) {
    instances = trieSet(instances, id, { bucket: buckets[id] ?? null, quality: quality[id] ?? null, guard: guards[id] ?? null });
  }
  return instances;
}

/** Every record as [instanceId, record], in the trie's order (tests and readers that list them all). */
export const instanceEntries = (instances: Instances): Array<[instanceId: string, instance: InstanceState]> => trieEntries(instances);
