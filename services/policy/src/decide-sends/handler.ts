import { withTransaction } from '@gw/db';
import type { SendDecided, SendRequested } from '@gw/events';
import type { TransformBatch } from '@gw/kafka';
import { decide, initialPolicyState } from '@gw/policy';
import type { Runtime } from '@gw/runtime';
import { findDecision, insertDecision, nextLogId } from './policy-log-store.ts';
import { toDecidedEvent, toSendCommand } from './to-decided-event.ts';

/**
 * Decides each SendRequested of a batch. The policy-log rows are committed in Postgres before the
 * decisions are appended; a redelivered command finds its row and re-emits the recorded decision
 * (same event id, same log_id) instead of deciding, or counting, twice.
 */
export function decideSends(runtime: Runtime, clock: () => number = Date.now): TransformBatch {
  const { codec, pool, logger, metrics } = runtime;
  const group = runtime.topics.group('policy');
  return async (records) => {
    const commands: SendRequested[] = [];
    for (const record of records) {
      try {
        const event = await codec.decode(record);
        if (event?.type === 'SendRequested') commands.push(event.payload);
      } catch (error) {
        // A record we cannot decode is skipped, not retried for ever; it stays in the log for inspection.
        metrics.eventsProcessed.inc({ group, topic: record.topic, outcome: 'undecodable' });
        logger.error({ topic: record.topic, partition: record.partition, offset: record.offset, error: String(error) }, 'undecodable record skipped');
      }
    }
    if (commands.length === 0) return [];

    const decisions = await withTransaction(pool, async (client) => {
      const out: SendDecided[] = [];
      for (const command of commands) {
        const recorded = await findDecision(client, command.correlation_id);
        if (recorded) {
          metrics.eventsProcessed.inc({ group, topic: 'send-requested', outcome: 'redelivered' });
          // The stored copy keeps no message body; the redelivered command still has it.
          out.push({ ...recorded, dispatch: recorded.dispatch ? { ...recorded.dispatch, text: command.message } : null });
          continue;
        }
        const decision = decide(toSendCommand(command), initialPolicyState());
        const event = toDecidedEvent(command, decision, await nextLogId(client), clock());
        await insertDecision(client, event);
        metrics.eventsProcessed.inc({ group, topic: 'send-requested', outcome: decision.decision });
        logger.info({ correlation_id: command.correlation_id, log_id: event.log_id, decision: event.decision, error_code: event.error_code }, 'send decided');
        out.push(event);
      }
      return out;
    });
    return Promise.all(decisions.map((event) => codec.encode('SendDecided', event)));
  };
}
