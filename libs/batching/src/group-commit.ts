/**
 * Group commit: while one flush is in flight, later submissions queue up and go out together in
 * the next one. An idle system pays no added latency; a busy one makes fewer, larger round trips
 * (one produce request, one statement) instead of one per caller. `flush` answers one result per
 * item, in order, or nothing when there is nothing to answer.
 */
export class GroupCommit<T, R = void> {
  private queue: Array<{ item: T; resolve: (result: R) => void; reject: (error: unknown) => void }> = [];
  private flushing = false;

  constructor(
    private readonly flush: (items: T[]) => Promise<R[] | void>,
    private readonly maxBatch = 1000,
  ) {}

  /** Submits items that go out together; resolves once they are flushed. */
  submit(items: T[]): Promise<void> {
    return Promise.all(items.map((item) => this.one(item))).then(() => undefined);
  }

  /** Submits one item and resolves with its result. */
  one(item: T): Promise<R> {
    const done = new Promise<R>((resolve, reject) => this.queue.push({ item, resolve, reject }));
    if (!this.flushing) void this.drain();
    return done;
  }

  private async drain(): Promise<void> {
    this.flushing = true;
    try {
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0, this.maxBatch);
        try {
          const results = await this.flush(batch.map((entry) => entry.item));
          batch.forEach((entry, i) => entry.resolve((results ? results[i] : undefined) as R));
        } catch (error) {
          for (const entry of batch) entry.reject(error);
        }
      }
    } finally {
      this.flushing = false;
    }
  }
}
