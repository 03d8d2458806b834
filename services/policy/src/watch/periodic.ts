import { describeError, type Logger } from '@gw/observability';

/**
 * Runs `work` at start and then every `everyMs` (0: never), one round at a time: a round still
 * going when the next is due lets that one pass. A failed round is logged and the next one tries
 * again. stop() waits for the round under way.
 */
export class Periodic {
  private timer: NodeJS.Timeout | undefined;
  private round: Promise<void> | undefined;

  constructor(private readonly what: string, private readonly everyMs: number, private readonly work: () => Promise<void>, private readonly logger: Logger) {}

  start(): void {
    if (this.everyMs <= 0) return;
    const run = () => {
      if (this.round) return;
      this.round = this.work()
        .catch((error) => this.logger.warn({ error: describeError(error) }, `${this.what} failed; tried again next round`))
        .finally(() => (this.round = undefined));
    };
    run();
    this.timer = setInterval(run, this.everyMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.round;
  }
}
