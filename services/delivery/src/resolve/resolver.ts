import { derivedEventId } from '@gw/events';
import { findSentMessage, type FindSentMessageResult } from '@gw/evolution';
import { describeError } from '@gw/observability';
import { recordOutcomes, type DeliveryOutcome } from '../dispatch/delivery-store.ts';
import { sendThroughManager, type DispatchDeps } from '../dispatch/handler.ts';
import type { InstanceDirectory } from '../dispatch/instance-directory.ts';
import { mapConcurrent } from '../dispatch/map-concurrent.ts';
import { dispatched, failed, outcomeRecords, toOutcome, type SendTask } from '../dispatch/outcomes.ts';
import { longestCallMs } from '../dispatch/pacing.ts';
import { attributedIds, backOff, holdUntil, startAttempt, takeDue, type OpenSend } from './open-sends.ts';
import { StoreEvidenceCache } from './store-evidence.ts';

/** DeliveryFailed reason of a send that may or may not have gone out, which we will not send again. */
export const OUTCOME_UNKNOWN = 'outcome_unknown';

export interface ResolverSettings {
  /** How often due sends are looked for. */
  everyMs: number;
  /** An attempt is looked at once it is this old: past the send timeout and the longest typing delay, so no live call is still under way. */
  afterMs: number;
  /** A send still unresolved this long after its first claim is failed (no_ack), only when the manager could not be asked. */
  ackDeadlineMs: number;
  /** Attempts before a message the manager keeps not having is failed for good. */
  maxAttempts: number;
  /** Budget of one lookup in the manager's store. */
  lookupTimeoutMs: number;
  /** Past the send timeout, how long a slow manager may still carry out an abandoned send: an absence counts only after it. */
  settleMs: number;
  /** How long what was learned of an instance's store (keeps sent messages or not) is trusted. */
  storeEvidenceTtlMs: number;
}

const BATCH = 32;
/** While an attempt settles, its store is looked at this often (a slow send found early answers early). */
const SETTLE_RECHECK_MS = 3_000;
const backoffMs = (failedChecks: number) => Math.min(1_000 * 2 ** failedChecks, 30_000);

/**
 * Settles sends whose outcome is open: a delivery process died mid-call (the row stayed
 * `dispatching`), or the manager's answer never came (`unknown`). The manager's own message store
 * decides (Evolution v2 POST /chat/findMessages): a message of ours to the recipient with this
 * text since the first claim means it was dispatched. An absence is a confirmed absence, and the
 * send is sent again under a new attempt, only when the store is known to keep sent messages
 * (store-evidence.ts) and the attempt is older than the send timeout plus `settleMs` (Evolution
 * carries out a send whose caller gave up, and stores it only when it is done); before that the
 * send is looked at again then; with the store not known on, it is failed `outcome_unknown` and
 * never sent again (docs/decisions.md). A manager that cannot be asked is asked again with
 * backoff, and only past ACK_DEADLINE_MS is the send failed (no_ack). Every outcome is appended to delivery-events (the
 * waiting request answers from it) before its row commits, with ids derived from the message and
 * attempt, so a round cut short repeats the same records.
 */
export class OpenSendResolver {
  private timer: NodeJS.Timeout | undefined;
  private round: Promise<void> | undefined;
  private readonly stores: StoreEvidenceCache;

  constructor(private readonly deps: DispatchDeps & { directory: InstanceDirectory }, private readonly settings: ResolverSettings, private readonly clock: () => number = Date.now) {
    this.stores = new StoreEvidenceCache(settings.storeEvidenceTtlMs, clock);
  }

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
    const hold = this.settings.lookupTimeoutMs + longestCallMs(this.deps.runtime.config.delivery) + 10_000;
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
    let lookup: FindSentMessageResult = send.resolvable ? await this.lookUp(send, now) : { kind: 'unreachable', detail: 'claimed before recipients were kept' };
    if (lookup.kind === 'found') {
      this.count('found');
      this.stores.sawStored(send.instanceId);
      logger.info({ ...log }, 'open send found at the manager: dispatched');
      await this.settle(send, dispatched(send, lookup.providerMessageId, 'SERVER_ACK', now, derivedEventId(send.messageId, `found-${send.attempt}`)));
      return;
    }
    if (lookup.kind === 'absent') {
      const settledAt = send.attemptStartedMs + longestCallMs(this.deps.runtime.config.delivery) + this.settings.settleMs;
      if (now < settledAt) {
        // A slow manager may still be carrying the attempt out: look again soon, and decide on an
        // absence only once the send would be stored.
        this.count('settling');
        await holdUntil(this.deps.runtime.pool, send, Math.min(settledAt, now + SETTLE_RECHECK_MS));
        return;
      }
      const store = await this.storeEvidence(send);
      if (store.kind === 'on') {
        if (send.attempt >= this.settings.maxAttempts) {
          this.count('given_up');
          logger.warn({ ...log }, 'open send absent at the manager after the last attempt: failed');
          await this.settle(send, failed(send, 'not_accepted', `the manager did not take the message in ${send.attempt} attempts`, true, now, derivedEventId(send.messageId, `given-up-${send.attempt}`)));
        } else {
          this.count('resent');
          logger.info({ ...log }, 'open send absent at the manager, whose store keeps sent messages: sent again under a new attempt');
          await this.resend(send);
        }
        return;
      }
      if (store.kind === 'off_or_unknown') {
        this.count(OUTCOME_UNKNOWN);
        logger.warn({ ...log, store: store.why }, 'open send not in a store not known to keep sent messages: failed (outcome_unknown), not sent again');
        const detail = 'the instance did not answer in time and its message store cannot tell whether it sent the message';
        await this.settle(send, failed(send, OUTCOME_UNKNOWN, detail, false, now, derivedEventId(send.messageId, `outcome-unknown-${send.attempt}`)));
        return;
      }
      lookup = store;
    }
    if (now - send.firstClaimedMs >= this.settings.ackDeadlineMs) {
      this.count('no_ack');
      logger.warn({ ...log, detail: lookup.detail }, 'open send unresolved at the deadline: failed (no_ack)');
      await this.settle(send, failed(send, 'no_ack', 'no acknowledgement from the manager within the deadline', false, now, derivedEventId(send.messageId, 'no-ack')));
    } else {
      this.count('unreachable');
      logger.warn({ ...log, detail: lookup.detail }, 'manager could not be asked about an open send; asking again later');
      await backOff(this.deps.runtime.pool, send, backoffMs(send.failedChecks));
    }
  }

  /** Whether the instance's store is known to keep sent messages (see StoreEvidenceCache). */
  private async storeEvidence(send: OpenSend) {
    const target = await this.deps.directory.lookup(send.instanceId);
    if (!target) return { kind: 'unreachable' as const, detail: 'the instance is no longer configured' };
    return this.stores.of(this.deps.runtime.pool, send.instanceId, target, this.settings.lookupTimeoutMs);
  }

  private async lookUp(send: OpenSend, now: number): Promise<FindSentMessageResult> {
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
      const recorded = await recordOutcomes(tx, [{ messageId: task.messageId, attempt: task.attempt, outcome, detail: null, appended: true }]);
      // Someone settled or resent it meanwhile: theirs is the outcome.
      if (!recorded.has(task.messageId)) return;
      await kafka.send(await outcomeRecords(codec, task, outcome));
    });
  }

  /**
   * Sends it again under a new attempt, paced like any send: in its instance's turn (the attempt
   * starts in the turn, so its start is the call's), typed for the same time (derived from the
   * message id). A second resolver that took the row meanwhile finds the attempt moved on.
   */
  private async resend(send: OpenSend): Promise<void> {
    await this.deps.lanes.turn(send.instanceId, send.messageId, () => this.resendInTurn(send));
  }

  private async resendInTurn(send: OpenSend): Promise<void> {
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
