import { request } from 'undici';
import { sleep } from './sleep.ts';
import type { ResolvedOptions } from './types.ts';

// Posts webhook envelopes as Evolution does. The Baileys handlers call sendDataWebhook without
// awaiting it (whatsapp.baileys.service.ts 2.3.6 l.483, 1353, 1551; 2.3.7 l.509, 1483, 1702), so
// every event is posted, and retried, on its own: webhook.controller.ts retryWebhookRequest
// (2.3.6 ~l.190-280) loops up to WEBHOOK_RETRY_MAX_ATTEMPTS (10) with exponential backoff, ±20 %
// jitter, never below the initial delay. A retried event therefore arrives after later ones
// (a late `connecting` after `open`, DELIVERY_ACK before SERVER_ACK). Nothing here blocks an
// HTTP request; idle() lets tests wait until every post has settled.

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
  private readonly inFlight = new Set<Promise<void>>();
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

    // Not chained to the instance's earlier posts: each event goes out (and retries) at once.
    const posting = this.deliver(delivery, record).catch(() => undefined);
    this.inFlight.add(posting);
    void posting.then(() => this.inFlight.delete(posting));
  }

  /** Posts not yet delivered or given up. */
  pending(): number {
    return this.inFlight.size;
  }

  list(instance?: string): DeliveryRecord[] {
    return this.records.filter((record) => instance === undefined || record.instance === instance);
  }

  clear(): void {
    this.records.length = 0;
  }

  /** Resolves once every post has been delivered or given up (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all([...this.inFlight]);
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
            // Header names are case-insensitive: a configured `User-Agent` replaces the default.
            ...Object.fromEntries(Object.entries(delivery.headers).map(([name, value]) => [name.toLowerCase(), value])),
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

  /** retryWebhookRequest: min(initial·2^(n-1), max) ± 20 %, but never below the initial delay. */
  private backoff(attempt: number): number {
    const { initialDelayMs, maxDelayMs } = this.retry;
    const base = Math.min(initialDelayMs * 2 ** (attempt - 1), maxDelayMs);
    const jitter = base * JITTER * (Math.random() * 2 - 1);
    return Math.round(Math.max(initialDelayMs, base + jitter));
  }

  private finish(record: DeliveryRecord, state: 'delivered' | 'failed'): void {
    record.state = state;
    record.finished_at = new Date().toISOString();
  }
}
