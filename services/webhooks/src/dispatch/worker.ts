import type { Pool } from '@gw/db';
import { describeError, type Logger } from '@gw/observability';
import { DeliveryScheduler, type RetryPolicy, type SsrfGuard } from '@gw/webhooks';
import { attemptDelivery, type AttemptDeps, type AttemptRecord } from './attempt.ts';
import { claimDue, releaseExpiredLeases, type ClaimedDelivery } from './claims.ts';
import { AttemptRecorder } from './recorder.ts';
import { SigningKeyCache } from './signing-keys.ts';

export interface WorkerOptions {
  pool: Pool;
  guard: SsrfGuard;
  policy: RetryPolicy;
  logger: Logger;
  /** Opens an endpoint's sealed signing secret, bound to the endpoint's instance (SEAL_USES.webhookSigningSecret). */
  openSecret(sealed: string, instanceId: string): string;
  /** Attempts in flight in this process, and per endpoint (a failing endpoint gets one). */
  concurrency: number;
  endpointConcurrency: number;
  pollMs: number;
  leaseMs: number;
  now?: () => number;
  onAttempt?(record: AttemptRecord): void;
}

/** A lane holds this many claims per attempt slot: enough queued to keep its slots busy between claims. */
const LANE_DEPTH = 4;

/**
 * Claims due deliveries from Postgres and runs them through a per-endpoint scheduler: each
 * endpoint has its own lane and concurrency limit, so a slow or dead endpoint holds at most its
 * own slots, and its backlog stays in the table instead of in this process (it is skipped when
 * claiming while its lane is full). Retries are rows with a later due time: nothing blocks the
 * consumer that queues new deliveries.
 */
export class DeliveryWorker {
  private readonly scheduler: DeliveryScheduler;
  private readonly recorder: AttemptRecorder;
  private readonly signingKeys: SigningKeyCache;
  private readonly failing = new Map<string, boolean>();
  /** Claims per endpoint whose attempt has not ended (queued or running): what its lane has taken. */
  private readonly held = new Map<string, number>();
  private readonly now: () => number;
  private running = false;
  private loop: Promise<void> | null = null;
  private wakeUp: (() => void) | null = null;
  private woken = false;
  private inFlight = 0;
  private readonly attemptDeps: AttemptDeps;

  constructor(private readonly options: WorkerOptions) {
    this.now = options.now ?? Date.now;
    this.signingKeys = new SigningKeyCache({ open: options.openSecret });
    this.attemptDeps = { guard: options.guard, policy: options.policy, now: this.now, secretsFor: (c) => this.signingKeys.keysFor(c, this.now()) };
    this.scheduler = new DeliveryScheduler({
      globalConcurrency: options.concurrency,
      perEndpointConcurrency: (instanceId) => (this.failing.get(instanceId) ? 1 : options.endpointConcurrency),
    });
    this.recorder = new AttemptRecorder(options.pool, options.policy, (error) => options.logger.error({ error: describeError(error) }, 'recording webhook attempts failed; the claims are retried when their lease ends'));
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = this.run();
  }

  /** New deliveries were queued: look now instead of at the next poll. */
  wake(): void {
    this.woken = true;
    this.wakeUp?.();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.wake();
    await this.loop;
    await this.scheduler.idle();
    await this.recorder.flush();
  }

  private async run(): Promise<void> {
    let lastSweep = 0;
    while (this.running) {
      let more = false;
      try {
        if (this.now() - lastSweep >= Math.min(this.options.leaseMs / 4, 5_000)) {
          lastSweep = this.now();
          this.signingKeys.prune(lastSweep);
          const released = await releaseExpiredLeases(this.options.pool, lastSweep);
          if (released > 0) this.options.logger.warn({ released }, 'webhook claims whose lease ran out are due again');
        }
        more = await this.claimAndDispatch();
      } catch (error) {
        this.options.logger.warn({ error: describeError(error) }, 'claiming webhook deliveries failed');
      }
      // The claim was cut short by this process's capacity: look again at once (more may be due).
      // Otherwise every lane got what was due, up to its room: sleep until a lane has drained to
      // half, new deliveries are queued, or the poll (retries falling due), so claims come in
      // lane-sized batches rather than one statement per finished attempt.
      if (!more) await this.sleep();
    }
  }

  /** Deliveries held here (running, queued in a lane, or being recorded) at most: twice the concurrency. */
  private capacity(): number {
    return Math.max(0, this.options.concurrency * 2 - this.inFlight);
  }

  private laneCap(instanceId: string): number {
    return (this.failing.get(instanceId) ? 1 : this.options.endpointConcurrency) * LANE_DEPTH;
  }

  /** Claims what is due, up to each lane's room; true when this process's capacity cut the claim short. */
  private async claimAndDispatch(): Promise<boolean> {
    const limit = Math.min(this.capacity(), 500);
    if (limit === 0) return false;
    const claims = await claimDue(this.options.pool, {
      now: this.now(),
      limit,
      laneCap: { healthy: this.options.endpointConcurrency * LANE_DEPTH, failing: LANE_DEPTH },
      held: this.held,
      leaseMs: this.options.leaseMs,
    });
    for (const claim of claims) this.dispatch(claim);
    return claims.length === limit;
  }

  private dispatch(claim: ClaimedDelivery): void {
    this.inFlight++;
    this.held.set(claim.instanceId, (this.held.get(claim.instanceId) ?? 0) + 1);
    this.failing.set(claim.instanceId, claim.endpointFailing);
    void this.scheduler
      .run(claim.instanceId, () => attemptDelivery(claim, this.attemptDeps))
      .then((record) => {
        this.failing.set(claim.instanceId, record.classification.outcome !== 'success');
        this.options.onAttempt?.(record);
        this.leaveLane(claim.instanceId);
        return this.recorder.record(record);
      }, (error: unknown) => {
        this.leaveLane(claim.instanceId);
        throw error;
      })
      .catch((error) => this.options.logger.warn({ deliveryId: claim.deliveryId, error: describeError(error) }, 'webhook attempt not recorded'))
      .finally(() => {
        this.inFlight--;
        const idle = this.scheduler.activeFor(claim.instanceId) === 0 && this.scheduler.queuedFor(claim.instanceId) === 0;
        if (idle) this.failing.delete(claim.instanceId);
      });
  }

  /**
   * An attempt has ended: its claim leaves the lane (its recording, a few ms, is bounded by the
   * process's capacity instead). A lane drained to half claims more now rather than at the next poll.
   */
  private leaveLane(instanceId: string): void {
    const held = (this.held.get(instanceId) ?? 1) - 1;
    if (held > 0) this.held.set(instanceId, held);
    else this.held.delete(instanceId);
    if (held <= this.laneCap(instanceId) / 2) this.wake();
  }

  private sleep(): Promise<void> {
    if (this.woken) {
      this.woken = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const timer = setTimeout(done, this.options.pollMs);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wakeUp = () => {
        this.wakeUp = null;
        this.woken = false;
        done();
      };
    });
  }
}
