import { derivedEventId, type SendDecided } from '@gw/events';
import type { ManagerBreakers, SendTextResult } from '@gw/evolution';
import type { OutgoingRecord, TransformBatch } from '@gw/kafka';
import type { Runtime } from '@gw/runtime';
import { claim, recordedOutcomes, recordOutcomes, type DeliveryOutcome, type RecordedOutcome } from './delivery-store.ts';
import type { InstanceDirectory } from './instance-directory.ts';
import { mapConcurrent } from './map-concurrent.ts';
import { deliveryFact, toOutcome } from './to-outcome.ts';
import { toFactRecord } from '@gw/policy-log';

export interface DispatchDeps {
  runtime: Runtime;
  directory: InstanceDirectory;
  breakers: ManagerBreakers;
  clock?: () => number;
}

/**
 * Sends every accepted decision of a batch through its instance. Each message is claimed in
 * Postgres before it is sent; a redelivered decision re-emits the recorded outcome, and one whose
 * send was interrupted (outcome unknown) is left for reconciliation rather than sent again.
 */
export function dispatchAccepted({ runtime, directory, breakers, clock = Date.now }: DispatchDeps): TransformBatch {
  const { codec, pool, logger, metrics, config } = runtime;
  const group = runtime.topics.group('delivery');
  return async (records) => {
    const accepted: SendDecided[] = [];
    for (const record of records) {
      try {
        const event = await codec.decode(record);
        if (event?.type === 'SendDecided' && event.payload.decision === 'accepted' && event.payload.dispatch) accepted.push(event.payload);
      } catch (error) {
        metrics.eventsProcessed.inc({ group, topic: record.topic, outcome: 'undecodable' });
        logger.error({ topic: record.topic, partition: record.partition, offset: record.offset, error: String(error) }, 'undecodable record skipped');
      }
    }
    if (accepted.length === 0) return [];

    const claimed = await claim(pool, accepted);
    const already = accepted.filter((d) => !claimed.has(d.message_id));
    const outcomes: Array<{ decision: SendDecided; outcome: DeliveryOutcome }> = [];

    if (already.length > 0) {
      const recorded = await recordedOutcomes(pool, already.map((d) => d.message_id));
      for (const decision of already) {
        const row = recorded.get(decision.message_id);
        metrics.eventsProcessed.inc({ group, topic: 'send-decided', outcome: 'redelivered' });
        if (row?.outcome) {
          outcomes.push({ decision, outcome: row.outcome });
        } else {
          // Claimed by a process that stopped mid-send: the manager may have it. Never resend blindly;
          // mark it unknown so it is visible and can be reconciled from the manager's acks.
          if (row?.state === 'dispatching') await recordOutcomes(pool, [{ messageId: decision.message_id, outcome: null, detail: 'send interrupted by a restart; outcome unknown' }]);
          logger.warn({ correlation_id: decision.correlation_id, message_id: decision.message_id, state: row?.state }, 'redelivered decision with unknown outcome: not sent again');
        }
      }
    }

    const fresh = accepted.filter((d) => claimed.has(d.message_id));
    const settled: RecordedOutcome[] = [];
    const results = await mapConcurrent(fresh, config.delivery.concurrency, async (decision) => {
      const target = await directory.lookup(decision.instance_id);
      const result: SendTextResult = target
        ? await breakers.send({ ...target, phone: decision.dispatch!.phone, text: decision.dispatch!.text, timeoutMs: config.delivery.sendTimeoutMs })
        : { kind: 'failed', reason: 'manager_rejected', detail: 'the instance is no longer configured' };
      const outcome = toOutcome(decision, result, clock());
      settled.push({ messageId: decision.message_id, outcome, detail: result.kind === 'ambiguous' ? result.detail : null });
      metrics.eventsProcessed.inc({ group, topic: 'send-decided', outcome: result.kind });
      // Sends that went through are counted in metrics; the others are worth a line each.
      const fields = { correlation_id: decision.correlation_id, message_id: decision.message_id, result: result.kind, reason: 'reason' in result ? result.reason : undefined };
      if (result.kind === 'accepted') logger.debug(fields, 'delivery attempted');
      else logger.warn(fields, 'delivery not completed');
      return outcome ? { decision, outcome } : null;
    });
    for (const result of results) if (result) outcomes.push(result);
    await recordOutcomes(pool, settled);

    const encoded: OutgoingRecord[] = [];
    for (const { decision, outcome } of outcomes) {
      encoded.push(await codec.encode(outcome.type, outcome.payload as never));
      // The outcome is also a policy input (delivery quality): appended to the customer's stream
      // in the same transaction, so the policy engine folds it in order with the sends.
      // Its id derives from the outcome's (recorded, so re-emitted as it was): a replayed batch's copy is the same record.
      const fact = { ...toFactRecord(deliveryFact(decision, outcome), decision.correlation_id), event_id: derivedEventId(outcome.payload.event_id, 'delivery-fact') };
      encoded.push(await codec.encode('PolicyInputRecorded', fact));
    }
    return encoded;
  };
}
