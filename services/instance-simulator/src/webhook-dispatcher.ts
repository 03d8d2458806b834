import { request } from 'undici';
import { sleep } from './sleep.ts';
import type { ResolvedOptions } from './types.ts';

// Posts webhook envelopes. Deliveries of one instance go out one at a time, in the order
// the events happened (a retried event holds back the later ones, as Evolution's awaited
// emit does); instances do not wait for each other. Nothing here blocks an HTTP request.

/** Evolution 2.3 does not retry these (WEBHOOK_RETRY_NON_RETRYABLE_STATUS_CODES default). */
export const NON_RETRYABLE_STATUS = [400, 401, 403, 404, 422];
const JITTER = 0.2;
const KEPT_RECORDS = 500;

export interface WebhookDelivery {
  instance: string;
  event: string;
  url: string;
  headers: Record<string, string>;
  body: unknown;
}

export interface DeliveryRecord {
  instance: string;
  event: string;
  url: string;
  state: 'pending' | 'delivered' | 'failed';
  attempts: number;
  last_status: number | null;
  last_error: string | null;
  queued_at: string;
  finished_at: string | null;
}

export class WebhookDispatcher {
  private readonly queues = new Map<string, Promise<void>>();
  private readonly records: DeliveryRecord[] = [];

  constructor(
    private readonly retry: ResolvedOptions['webhookRetry'],
    private readonly shutdown: AbortSignal,
  ) {}

  enqueue(delivery: WebhookDelivery): void {
    if (this.shutdown.aborted) return;
    const record: DeliveryRecord = {
      instance: delivery.instance,
      event: delivery.event,
      url: delivery.url,
      state: 'pending',
      attempts: 0,
      last_status: null,
      last_error: null,
      queued_at: new Date().toISOString(),
      finished_at: null,
    };
    this.records.push(record);
    if (this.records.length > KEPT_RECORDS) this.records.splice(0, this.records.length - KEPT_RECORDS);

    const previous = this.queues.get(delivery.instance) ?? Promise.resolve();
    const next = previous.then(() => this.deliver(delivery, record)).catch(() => undefined);
    this.queues.set(delivery.instance, next);
    void next.then(() => {
      if (this.queues.get(delivery.instance) === next) this.queues.delete(delivery.instance);
    });
  }

  list(instance?: string): DeliveryRecord[] {
    return this.records.filter((record) => instance === undefined || record.instance === instance);
  }

  clear(): void {
    this.records.length = 0;
  }

  /** Resolves once every queued delivery has finished (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.queues.size > 0) await Promise.all([...this.queues.values()]);
  }

  private async deliver(delivery: WebhookDelivery, record: DeliveryRecord): Promise<void> {
    const payload = JSON.stringify(delivery.body);
    for (let attempt = 1; attempt <= this.retry.maxAttempts; attempt += 1) {
      if (this.shutdown.aborted) break;
      record.attempts = attempt;
      try {
        // undici's request, not fetch: a webhook per event and several per send make the
        // WHATWG stream and signal machinery of fetch the simulator's main cost under load.
        const response = await request(delivery.url, {
          method: 'POST',
          headers: {
            accept: 'application/json, text/plain, */*',
            'user-agent': 'axios/1.7.9 (evolution-api simulator)',
            ...delivery.headers,
            'content-type': 'application/json',
          },
          body: payload,
          maxRedirections: 5,
          signal: this.shutdown,
          headersTimeout: this.retry.timeoutMs,
          bodyTimeout: this.retry.timeoutMs,
        });
        await response.body.dump().catch(() => undefined);
        record.last_status = response.statusCode;
        record.last_error = null;
        if (response.statusCode >= 200 && response.statusCode < 300) return this.finish(record, 'delivered');
        if (NON_RETRYABLE_STATUS.includes(response.statusCode)) break;
      } catch (error) {
        record.last_error = error instanceof Error ? error.message : String(error);
      }
      if (attempt < this.retry.maxAttempts) await sleep(this.backoff(attempt), this.shutdown);
    }
    this.finish(record, 'failed');
  }

  private backoff(attempt: number): number {
    const base = Math.min(this.retry.initialDelayMs * 2 ** (attempt - 1), this.retry.maxDelayMs);
    const jitter = base * JITTER * (Math.random() * 2 - 1);
    return Math.max(0, Math.round(base + jitter));
  }

  private finish(record: DeliveryRecord, state: 'delivered' | 'failed'): void {
    record.state = state;
    record.finished_at = new Date().toISOString();
  }
}
