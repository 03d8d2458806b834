/**
 * Group commit for appends: while one produce request is in flight, later appends queue up and
 * go out together in the next request. An idle system pays no added latency; a busy one sends
 * fewer, larger requests (the idempotent producer allows only one request in flight).
 */
export class GroupCommit<T> {
  private queue: Array<{ item: T; resolve: () => void; reject: (error: unknown) => void }> = [];
  private flushing = false;

  constructor(
    private readonly flush: (items: T[]) => Promise<void>,
    private readonly maxBatch = 1000,
  ) {}

  submit(items: T[]): Promise<void> {
    const done = items.map(
      (item) => new Promise<void>((resolve, reject) => this.queue.push({ item, resolve, reject })),
    );
    if (!this.flushing) void this.drain();
    return Promise.all(done).then(() => undefined);
  }

  private async drain(): Promise<void> {
    this.flushing = true;
    try {
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0, this.maxBatch);
        try {
          await this.flush(batch.map((entry) => entry.item));
          for (const entry of batch) entry.resolve();
        } catch (error) {
          for (const entry of batch) entry.reject(error);
        }
      }
    } finally {
      this.flushing = false;
    }
  }
}
