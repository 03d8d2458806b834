import { randomUUID } from 'node:crypto';
import type { Queryable } from '@gw/db';
import { CORRELATION_HEADER, type EventCodec, type Topics } from '@gw/events';
import type { ConsumedRecord, KafkaClient, RunningConsumer } from '@gw/kafka';
import { describeError, type Logger } from '@gw/observability';
import { isFinal, type SendProgress } from './outcome.ts';
import { loadProgress, loadProgressMany } from './progress-read.ts';

interface Waiter {
  progress: SendProgress;
  /** When it started waiting (ms): the shared poll looks only at waiters older than one poll period. */
  since: number;
  wake: () => void;
}

/** What the routes use of the router: a fake answers in route tests. */
export type ReplyWaiter = Pick<ReplyRouter, 'wait'>;

/**
 * Request-reply over Kafka: every API process reads the decision and delivery topics with a
 * group of its own and wakes the requests waiting on a correlation id. A record for a command
 * no request of this process waits on (another process's, or one answered already) is passed
 * over in its fetched batch on its correlation-id header alone: never made a record, never
 * decoded. The projections in Postgres are read as a fallback, so a reply missed (e.g. during a
 * restart) still resolves: one statement per poll period for all the requests that have waited
 * that long, however many there are. docs/architecture.md "Request-reply".
 */
export class ReplyRouter {
  private readonly waiters = new Map<string, Set<Waiter>>();
  private consumer: RunningConsumer | undefined;
  private poller: NodeJS.Timeout | undefined;
  private polling = false;

  constructor(
    private readonly kafka: KafkaClient,
    private readonly codec: EventCodec,
    private readonly topics: Topics,
    private readonly pool: Queryable,
    private readonly logger: Logger,
    private readonly fallbackPollMs = 1000,
  ) {}

  async start(): Promise<RunningConsumer> {
    const consumer = await this.kafka.listen({
      groupId: this.topics.group(`api-replies-${randomUUID()}`),
      topics: [this.topics.name('policyDecisions'), this.topics.name('deliveryEvents')],
      fromBeginning: false,
      select: { header: CORRELATION_HEADER, wanted: (correlationId) => this.waiters.has(correlationId) },
      // A group of its own from the latest offset: no use for committed offsets (a reply passed
      // over during a rejoin is found by the poll below).
      commitOffsets: false,
      onRecord: (record) => this.route(record),
    });
    this.poller = setInterval(() => void this.pollWaiting(), this.fallbackPollMs);
    this.poller.unref();
    this.consumer = {
      ...consumer,
      stop: async () => {
        clearInterval(this.poller);
        await consumer.stop();
      },
    };
    return this.consumer;
  }

  private async route(record: ConsumedRecord): Promise<void> {
    const correlationId = record.headers[CORRELATION_HEADER];
    // Selected while a request waited; it may have been answered since (by the poll or its deadline).
    const waiting = correlationId === undefined ? undefined : this.waiters.get(correlationId);
    if (!waiting) return;
    try {
      const event = await this.codec.decode(record);
      if (!event) return;
      for (const waiter of waiting) {
        if (event.type === 'SendDecided') waiter.progress.decision = event.payload;
        if (event.type === 'MessageDispatched' || event.type === 'DeliveryFailed') waiter.progress.delivery = event as SendProgress['delivery'];
        waiter.wake();
      }
    } catch (error) {
      this.logger.warn({ correlation_id: correlationId, error: describeError(error) }, 'reply could not be decoded');
    }
  }

  private merge(commandId: string, stored: SendProgress): void {
    for (const waiter of this.waiters.get(commandId) ?? []) {
      waiter.progress.decision ??= stored.decision;
      waiter.progress.delivery ??= stored.delivery;
      waiter.wake();
    }
  }

  /** The shared fallback: one statement for every command some request has waited on for a poll period. */
  private async pollWaiting(): Promise<void> {
    if (this.polling || this.waiters.size === 0) return;
    this.polling = true;
    try {
      const now = Date.now();
      const due = [...this.waiters].filter(([, set]) => [...set].some((w) => now - w.since >= this.fallbackPollMs)).map(([id]) => id);
      for (const [commandId, stored] of await loadProgressMany(this.pool, due)) this.merge(commandId, stored);
    } catch (error) {
      this.logger.warn({ error: describeError(error) }, 'progress lookup failed');
    } finally {
      this.polling = false;
    }
  }

  /**
   * Registers interest in a command before it is appended (so no reply can slip past) and
   * resolves with the progress once final or at the deadline, whichever comes first.
   */
  wait(commandId: string, deadlineMs: number, options: { checkStoreFirst?: boolean; until?: 'final' | 'decision' } = {}): Promise<SendProgress> {
    const done = options.until === 'decision' ? (p: SendProgress) => p.decision !== null || p.delivery !== null : isFinal;
    const waiter: Waiter = { progress: { decision: null, delivery: null }, since: Date.now(), wake: () => undefined };
    const set = this.waiters.get(commandId) ?? new Set<Waiter>();
    set.add(waiter);
    this.waiters.set(commandId, set);

    return new Promise<SendProgress>((resolve) => {
      let settled = false;
      const finish = () => {
        if (settled) return;
        settled = true;
        clearTimeout(deadline);
        set.delete(waiter);
        if (set.size === 0 && this.waiters.get(commandId) === set) this.waiters.delete(commandId);
        resolve(waiter.progress);
      };
      waiter.wake = () => {
        if (done(waiter.progress)) finish();
      };
      // A retried request: what is recorded already answers it at once.
      if (options.checkStoreFirst) {
        loadProgress(this.pool, commandId)
          .then((stored) => this.merge(commandId, stored))
          .catch((error) => this.logger.warn({ correlation_id: commandId, error: describeError(error) }, 'progress lookup failed'));
      }
      const deadline = setTimeout(async () => {
        // One last look at the projections before answering with what is known.
        const stored = await loadProgress(this.pool, commandId).catch(() => null);
        if (stored) {
          waiter.progress.decision ??= stored.decision;
          waiter.progress.delivery ??= stored.delivery;
        }
        finish();
      }, deadlineMs);
    });
  }
}
