import { describeError } from '@gw/observability';
import type { Runtime } from '@gw/runtime';
import { purgeInbound } from './store.ts';

export interface RetentionSettings {
  /** Inbound messages older than this are deleted (INBOUND_LOG_RETENTION_DAYS, default 30). */
  retentionDays: number;
  /** How often the purge runs (INBOUND_LOG_PURGE_EVERY_MS, default an hour). */
  everyMs: number;
}

const DAY_MS = 86_400_000;
const BATCH = 5_000;

/**
 * The inbound log's retention (docs/decisions.md): deletes what is past it, a batch at a time,
 * at start and then on a timer. Every instance-events process runs it; two at once delete
 * disjoint or already-deleted rows, so no coordination is needed.
 */
export class InboundRetention {
  private timer: NodeJS.Timeout | undefined;
  private round: Promise<void> | undefined;

  constructor(private readonly runtime: Pick<Runtime, 'pool' | 'logger'>, private readonly settings: RetentionSettings, private readonly clock: () => number = Date.now) {}

  start(): void {
    const run = () => {
      if (this.round) return;
      this.round = this.purge()
        .then((deleted) => {
          if (deleted > 0) this.runtime.logger.info({ deleted, retention_days: this.settings.retentionDays }, 'inbound messages past their retention deleted');
        })
        .catch((error) => this.runtime.logger.warn({ error: describeError(error) }, 'inbound log purge failed; retried next round'))
        .finally(() => (this.round = undefined));
    };
    run();
    this.timer = setInterval(run, Math.max(this.settings.everyMs, 1_000));
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.round;
  }

  /** Deletes every inbound message received before the retention window; returns how many. */
  async purge(): Promise<number> {
    const before = new Date(this.clock() - this.settings.retentionDays * DAY_MS);
    let total = 0;
    for (;;) {
      const deleted = await purgeInbound(this.runtime.pool, before, BATCH);
      total += deleted;
      if (deleted < BATCH) return total;
    }
  }
}
