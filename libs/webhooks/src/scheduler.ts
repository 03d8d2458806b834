/**
 * Runs delivery attempts with a per-endpoint concurrency limit and a global limit. When a global
 * slot frees up it goes to the waiting endpoint with the fewest attempts in flight (ties in
 * round-robin order), never simply to the oldest task, so an endpoint with a long backlog or slow
 * answers cannot take more than its share: one slow or dead endpoint holds at most its
 * per-endpoint limit and never delays another endpoint.
 *
 * Sizing: globalConcurrency should exceed perEndpointConcurrency × the number of endpoints you
 * expect to be slow at the same time. `perEndpointConcurrency` may be a function so a delivery
 * service can give endpoints that are currently failing a limit of 1.
 */

export interface DeliverySchedulerOptions {
  /** Attempts in flight across all endpoints. */
  readonly globalConcurrency: number;
  /** Attempts in flight per endpoint (a number, or per endpoint key). */
  readonly perEndpointConcurrency: number | ((endpointKey: string) => number);
  /** Queued (not started) attempts per endpoint before run() rejects. Default unbounded. */
  readonly maxQueuedPerEndpoint?: number;
}

export class SchedulerQueueFullError extends Error {
  readonly code = 'endpoint_queue_full';
  constructor(readonly endpointKey: string) {
    super(`too many queued deliveries for endpoint ${endpointKey}`);
    this.name = 'SchedulerQueueFullError';
  }
}

interface QueuedTask {
  readonly start: () => void;
}

interface EndpointLane {
  active: number;
  readonly queue: QueuedTask[];
  /** Read index into queue (amortised O(1) dequeue). */
  head: number;
}

export interface SchedulerStats {
  readonly active: number;
  readonly queued: number;
  readonly endpoints: number;
}

export class DeliveryScheduler {
  private readonly lanes = new Map<string, EndpointLane>();
  /** Endpoint keys that have queued work and may start more, in round-robin order. */
  private readonly ready: string[] = [];
  private readonly inReady = new Set<string>();
  private active = 0;
  private queued = 0;
  private idleWaiters: Array<() => void> = [];

  constructor(private readonly options: DeliverySchedulerOptions) {
    if (!Number.isInteger(options.globalConcurrency) || options.globalConcurrency < 1) {
      throw new RangeError('globalConcurrency must be an integer >= 1');
    }
    if (typeof options.perEndpointConcurrency === 'number' && (!Number.isInteger(options.perEndpointConcurrency) || options.perEndpointConcurrency < 1)) {
      throw new RangeError('perEndpointConcurrency must be an integer >= 1');
    }
  }

  /** Runs `task` when both an endpoint slot and a global slot are free; resolves with its result. */
  run<T>(endpointKey: string, task: () => Promise<T>): Promise<T> {
    let lane = this.lanes.get(endpointKey);
    if (!lane) {
      lane = { active: 0, queue: [], head: 0 };
      this.lanes.set(endpointKey, lane);
    }
    const max = this.options.maxQueuedPerEndpoint;
    if (max !== undefined && lane.queue.length - lane.head >= max) {
      return Promise.reject(new SchedulerQueueFullError(endpointKey));
    }
    const l = lane;
    return new Promise<T>((resolve, reject) => {
      l.queue.push({
        start: () => {
          let p: Promise<T>;
          try {
            p = Promise.resolve(task());
          } catch (err) {
            p = Promise.reject(err);
          }
          p.then(resolve, reject).finally(() => this.finish(endpointKey, l));
        },
      });
      this.queued++;
      this.markReady(endpointKey);
      this.pump();
    });
  }

  stats(): SchedulerStats {
    return { active: this.active, queued: this.queued, endpoints: this.lanes.size };
  }

  activeFor(endpointKey: string): number {
    return this.lanes.get(endpointKey)?.active ?? 0;
  }

  queuedFor(endpointKey: string): number {
    const l = this.lanes.get(endpointKey);
    return l ? l.queue.length - l.head : 0;
  }

  /** Resolves when nothing is running or queued. */
  idle(): Promise<void> {
    if (this.active === 0 && this.queued === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private limitFor(key: string): number {
    const p = this.options.perEndpointConcurrency;
    const n = typeof p === 'function' ? p(key) : p;
    return Number.isFinite(n) && n >= 1 ? Math.floor(n) : 1;
  }

  private markReady(key: string): void {
    if (!this.inReady.has(key)) {
      this.inReady.add(key);
      this.ready.push(key);
    }
  }

  private pump(): void {
    while (this.active < this.options.globalConcurrency && this.ready.length > 0) {
      // The ready endpoint with the fewest attempts in flight (ties: ring order) gets the slot.
      let pick = 0;
      let fewest = Infinity;
      for (let i = 0; i < this.ready.length && fewest > 0; i++) {
        const n = this.lanes.get(this.ready[i]!)?.active ?? 0;
        if (n < fewest) {
          fewest = n;
          pick = i;
        }
      }
      const key = this.ready.splice(pick, 1)[0]!;
      this.inReady.delete(key);
      const lane = this.lanes.get(key);
      if (!lane || lane.head >= lane.queue.length) continue;
      if (lane.active >= this.limitFor(key)) {
        // Full: it is re-marked ready when one of its attempts finishes.
        continue;
      }
      const task = lane.queue[lane.head]!;
      lane.head++;
      if (lane.head > 1024 && lane.head * 2 > lane.queue.length) {
        lane.queue.splice(0, lane.head);
        lane.head = 0;
      }
      lane.active++;
      this.active++;
      this.queued--;
      if (lane.head < lane.queue.length) this.markReady(key); // back of the line: round robin
      task.start();
    }
  }

  private finish(key: string, lane: EndpointLane): void {
    lane.active--;
    this.active--;
    if (lane.head < lane.queue.length) this.markReady(key);
    else if (lane.active === 0 && this.lanes.get(key) === lane) this.lanes.delete(key);
    this.pump();
    if (this.active === 0 && this.queued === 0) {
      const waiters = this.idleWaiters;
      this.idleWaiters = [];
      waiters.forEach((w) => w());
    }
  }
}
