import { performance } from 'node:perf_hooks';

const monotonicMs = () => performance.now();

/**
 * Values read from Postgres a moment ago, each kept for `ttlMs` from its read (a hit never
 * extends it), so that a busy PBX integration's events do not each read the same rows. Owned by
 * the route that registers it (one per API process); `maxEntries` bounds it whatever ids are
 * asked for (past it, everything is forgotten and read again).
 */
export class RecentReads<K, V> {
  private readonly entries = new Map<K, { value: V; readAt: number }>();

  constructor(private readonly options: { ttlMs: number; maxEntries: number; clock?: () => number }) {}

  private now(): number {
    return (this.options.clock ?? monotonicMs)();
  }

  /** The value read less than ttlMs ago, if any. */
  get(key: K): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (this.now() - entry.readAt < this.options.ttlMs) return entry.value;
    this.entries.delete(key);
    return undefined;
  }

  /** Keeps a value just read. */
  set(key: K, value: V): void {
    if (this.entries.size >= this.options.maxEntries && !this.entries.has(key)) this.entries.clear();
    this.entries.set(key, { value, readAt: this.now() });
  }

  delete(key: K): void {
    this.entries.delete(key);
  }
}

/**
 * At most once per `everyMs` per key: for housekeeping a request would otherwise do every time
 * (e.g. forgetting a PBX integration's expired signatures).
 */
export class EverySoOften<K> {
  private readonly last = new Map<K, number>();

  constructor(private readonly options: { everyMs: number; maxEntries: number; clock?: () => number }) {}

  /** True (and noted) when the key's last turn was everyMs or more ago, or never. */
  due(key: K): boolean {
    const now = (this.options.clock ?? monotonicMs)();
    const last = this.last.get(key);
    if (last !== undefined && now - last < this.options.everyMs) return false;
    if (this.last.size >= this.options.maxEntries && last === undefined) this.last.clear();
    this.last.set(key, now);
    return true;
  }
}
