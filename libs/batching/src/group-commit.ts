/** A flush's answer for an item that did not go out (the others of the flush may have). */
export class ItemFailed {
  constructor(readonly error: unknown) {}
}

/** Refused at once: the queue of a group commit holds its limit already (the caller is told to back off). */
export class QueueFull extends Error {
  constructor(readonly limit: number) {
    super(`more than ${limit} items are waiting to be flushed`);
    this.name = 'QueueFull';
  }
}

export interface GroupCommitOptions {
  /** Items per flush. */
  maxBatch?: number;
  /** Items waiting at most; past it `one` and `submit` reject with QueueFull instead of queueing. */
  maxQueued?: number;
}

/**
 * Group commit: while one flush is in flight, later submissions queue up and go out together in
 * the next one. An idle system pays no added latency; a busy one makes fewer, larger round trips
 * (one produce request, one statement) instead of one per caller. `flush` answers one result per
 * item, in order, or nothing when there is nothing to answer; an item answered with ItemFailed is
 * rejected alone (a flush that wrote part of its items fails only the others). A flush that throws
 * rejects all of its items.
 */
export class GroupCommit<T, R = void> {
  private queue: Array<{ item: T; resolve: (result: R) => void; reject: (error: unknown) => void }> = [];
  private flushing = false;
  private readonly maxBatch: number;
  private readonly maxQueued: number;

  constructor(
    private readonly flush: (items: T[]) => Promise<Array<R | ItemFailed> | void>,
    options: GroupCommitOptions | number = {},
  ) {
    const settings = typeof options === 'number' ? { maxBatch: options } : options;
    this.maxBatch = settings.maxBatch ?? 1000;
    this.maxQueued = settings.maxQueued ?? Number.POSITIVE_INFINITY;
  }

  /** Submits items that go out together; resolves once they are flushed. */
  submit(items: T[]): Promise<void> {
    if (this.queue.length + items.length > this.maxQueued) return Promise.reject(new QueueFull(this.maxQueued));
    return Promise.all(items.map((item) => this.one(item))).then(() => undefined);
  }

  /** Submits one item and resolves with its result. */
  one(item: T): Promise<R> {
    if (this.queue.length >= this.maxQueued) return Promise.reject(new QueueFull(this.maxQueued));
    const done = new Promise<R>((resolve, reject) => this.queue.push({ item, resolve, reject }));
    if (!this.flushing) void this.drain();
    return done;
  }

  /** Items waiting for a flush (not counting the one in flight). */
  get queued(): number {
    return this.queue.length;
  }

  private async drain(): Promise<void> {
    this.flushing = true;
    try {
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0, this.maxBatch);
        try {
          const results = await this.flush(batch.map((entry) => entry.item));
          batch.forEach((entry, i) => {
            const result = results ? results[i] : undefined;
            if (result instanceof ItemFailed) entry.reject(result.error);
            else entry.resolve(result as R);
          });
        } catch (error) {
          for (const entry of batch) entry.reject(error);
        }
      }
    } finally {
      this.flushing = false;
    }
  }
}
