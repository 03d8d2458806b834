import { derivedEventId } from '@gw/events';
import { findSentMessage } from '@gw/evolution';
import { describeError } from '@gw/observability';
import { recordOutcomes, type DeliveryOutcome } from '../dispatch/delivery-store.ts';
import { sendThroughManager, type DispatchDeps } from '../dispatch/handler.ts';
import type { InstanceDirectory } from '../dispatch/instance-directory.ts';
import { mapConcurrent } from '../dispatch/map-concurrent.ts';
import { dispatched, failed, outcomeRecords, toOutcome, type SendTask } from '../dispatch/outcomes.ts';
import { attributedIds, backOff, startAttempt, takeDue, type OpenSend } from './open-sends.ts';

export interface ResolverSettings {
  /** How often due sends are looked for. */
  everyMs: number;
  /** An attempt is looked at once it is this old: past the send timeout, so no live call is still under way. */
  afterMs: number;
  /** A send still unresolved this long after its first claim is failed (no_ack), only when the manager could not be asked. */
  ackDeadlineMs: number;
  /** Attempts before a message the manager keeps not having is failed for good. */
  maxAttempts: number;
  /** Budget of one lookup in the manager's store. */
  lookupTimeoutMs: number;
}

const BATCH = 32;
const backoffMs = (failedChecks: number) => Math.min(1_000 * 2 ** failedChecks, 30_000);

/**
 * Settles sends whose outcome is open: a delivery process died mid-call (the row stayed
 * `dispatching`), or the manager's answer never came (`unknown`). The manager's own message store
 * decides (Evolution v2 POST /chat/findMessages): a message of ours to the recipient with this
 * text since the first claim means it was dispatched; a confirmed absence means it is sent again
 * under a new attempt; a manager that cannot be asked is asked again with backoff, and only past
 * ACK_DEADLINE_MS is the send failed (no_ack). Every outcome is appended to delivery-events (the
 * waiting request answers from it) before its row commits, with ids derived from the message and
 * attempt, so a round cut short repeats the same records.
 */
export class OpenSendResolver {
  private timer: NodeJS.Timeout | undefined;
  private round: Promise<void> | undefined;

  constructor(private readonly deps: DispatchDeps & { directory: InstanceDirectory }, private readonly settings: ResolverSettings, private readonly clock: () => number = Date.now) {}

  start(): void {
    this.timer = setInterval(() => {
      if (this.round) return;
      this.round = this.resolveDue()
        .catch((error) => this.deps.runtime.logger.warn({ error: describeError(error) }, 'resolving open sends failed; retried next round'))
        .finally(() => (this.round = undefined));
    }, this.settings.everyMs);
    this.timer.unref();
  }

  /** Stops taking rows and waits for the round under way (its rows are settled or left for the next process). */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.round;
  }

  /** One round: every due open send, a few at a time. */
  async resolveDue(): Promise<void> {
    const { pool } = this.deps.runtime;
    const hold = this.settings.lookupTimeoutMs + this.deps.runtime.config.delivery.sendTimeoutMs + 10_000;
    for (;;) {
      const due = await takeDue(pool, this.settings.afterMs, hold, BATCH);
      if (due.length === 0) return;
      await mapConcurrent(due, 8, (send) => this.resolve(send));
      if (due.length < BATCH) return;
    }
  }

  private count(outcome: string): void {
    this.deps.runtime.metrics.eventsProcessed.inc({ group: this.deps.runtime.topics.group('delivery-resolver'), topic: 'deliveries', outcome });
  }

  private async resolve(send: OpenSend): Promise<void> {
    const { logger } = this.deps.runtime;
    const now = this.clock();
    const log = { correlation_id: send.commandId, message_id: send.messageId, attempt: send.attempt };
    const lookup = send.resolvable ? await this.lookUp(send, now) : { kind: 'unreachable' as const, detail: 'claimed before recipients were kept' };
    if (lookup.kind === 'found') {
      this.count('found');
      logger.info({ ...log }, 'open send found at the manager: dispatched');
      await this.settle(send, dispatched(send, lookup.providerMessageId, 'SERVER_ACK', now, derivedEventId(send.messageId, `found-${send.attempt}`)));
    } else if (lookup.kind === 'absent') {
      if (send.attempt >= this.settings.maxAttempts) {
        this.count('given_up');
        logger.warn({ ...log }, 'open send absent at the manager after the last attempt: failed');
        await this.settle(send, failed(send, 'not_accepted', `the manager did not take the message in ${send.attempt} attempts`, true, now, derivedEventId(send.messageId, `given-up-${send.attempt}`)));
      } else {
        this.count('resent');
        logger.info({ ...log }, 'open send absent at the manager: sent again under a new attempt');
        await this.resend(send);
      }
    } else if (now - send.firstClaimedMs >= this.settings.ackDeadlineMs) {
      this.count('no_ack');
      logger.warn({ ...log, detail: lookup.detail }, 'open send unresolved at the deadline: failed (no_ack)');
      await this.settle(send, failed(send, 'no_ack', 'no acknowledgement from the manager within the deadline', false, now, derivedEventId(send.messageId, 'no-ack')));
    } else {
      this.count('unreachable');
      logger.warn({ ...log, detail: lookup.detail }, 'manager could not be asked about an open send; asking again later');
      await backOff(this.deps.runtime.pool, send, backoffMs(send.failedChecks));
    }
  }

  private async lookUp(send: OpenSend, now: number) {
    const target = await this.deps.directory.lookup(send.instanceId);
    if (!target) return { kind: 'unreachable' as const, detail: 'the instance is no longer configured' };
    return findSentMessage({
      ...target,
      phone: send.phone,
      text: send.text,
      sinceMs: send.firstClaimedMs,
      untilMs: now,
      excludeIds: await attributedIds(this.deps.runtime.pool, send),
      timeoutMs: this.settings.lookupTimeoutMs,
    });
  }

  /** Records the outcome for the attempt it settles and appends its records before committing. */
  private async settle(task: SendTask, outcome: DeliveryOutcome): Promise<void> {
    const { pool, kafka, codec } = this.deps.runtime;
    await pool.transaction(async (tx) => {
      const recorded = await recordOutcomes(tx, [{ messageId: task.messageId, attempt: task.attempt, outcome, detail: null }]);
      // Someone settled or resent it meanwhile: theirs is the outcome.
      if (!recorded.has(task.messageId)) return;
      await kafka.send(await outcomeRecords(codec, task, outcome));
    });
  }

  private async resend(send: OpenSend): Promise<void> {
    const attempt = await startAttempt(this.deps.runtime.pool, send);
    if (attempt === null) return;
    const task = { ...send, attempt };
    const result = await sendThroughManager(this.deps, task);
    const outcome = toOutcome(task, result, this.clock(), derivedEventId(send.messageId, `attempt-${attempt}`));
    if (outcome) await this.settle(task, outcome);
    // Ambiguous again: recorded unknown, for the next round to look up.
    else await recordOutcomes(this.deps.runtime.pool, [{ messageId: task.messageId, attempt, outcome: null, detail: result.kind === 'ambiguous' ? result.detail : null }]);
  }
}
