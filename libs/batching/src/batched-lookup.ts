import { GroupCommit } from './group-commit.ts';

/**
 * A lookup by key that concurrent callers share: keys asked for while a query is in flight are
 * fetched together by the next one (`WHERE id = ANY($1)`), so a busy service makes one round
 * trip for many requests and an idle one still answers each at once. Nothing is cached: every
 * answer is read after it was asked for, so a change (a revoked key) is seen by the next request.
 */
export class BatchedLookup<K, V> {
  private readonly commit: GroupCommit<K, V | undefined>;

  constructor(fetch: (keys: K[]) => Promise<Map<K, V>>, maxBatch = 500) {
    this.commit = new GroupCommit<K, V | undefined>(async (keys) => {
      const found = await fetch([...new Set(keys)]);
      return keys.map((key) => found.get(key));
    }, maxBatch);
  }

  get(key: K): Promise<V | undefined> {
    return this.commit.one(key);
  }
}
