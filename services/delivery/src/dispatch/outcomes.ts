import { derivedEventId, newEventId, type EventCodec, type SendDecided } from '@gw/events';
import type { SendTextResult } from '@gw/evolution';
import type { OutgoingRecord } from '@gw/kafka';
import type { DeliveryOutcomeRecorded } from '@gw/policy';
import { toFactRecord } from '@gw/policy-log';
import type { DeliveryOutcome } from './delivery-store.ts';

/** One message to send: what the stage takes from an accepted decision and the resolver from a deliveries row. */
export interface SendTask {
  messageId: string;
  /** The command id: the correlation id of every event of this send. */
  commandId: string;
  customerId: string;
  instanceId: string;
  logId: number;
  /** E.164. */
  phone: string;
  text: string;
  attempt: number;
  /** What the outcome events carry for their consumers (the customer's webhooks), so none of them reads our tables or the policy log. */
  recipient: string;
  purpose: string;
  /** The instance's display name ('' when the directory does not know the instance). */
  instanceName: string;
}

/** The task of an accepted decision; `instanceName`: the instance's display name, from the directory. */
export function taskOf(decision: SendDecided, instanceName: string): SendTask {
  return {
    messageId: decision.message_id,
    commandId: decision.correlation_id,
    customerId: decision.customer_id,
    instanceId: decision.instance_id,
    logId: decision.log_id,
    phone: decision.dispatch!.phone,
    text: decision.dispatch!.text,
    attempt: 1,
    recipient: decision.recipient,
    purpose: decision.message_purpose,
    instanceName,
  };
}

type SendFacts = Pick<SendTask, 'recipient' | 'purpose' | 'instanceName'>;
const sendFacts = (task: SendFacts) => ({ recipient: task.recipient, message_purpose: task.purpose, instance_name: task.instanceName });

const base = (task: SendTask, now: number, eventId: string) => ({
  event_id: eventId,
  correlation_id: task.commandId,
  occurred_at: now,
  customer_id: task.customerId,
  instance_id: task.instanceId,
  message_id: task.messageId,
  log_id: task.logId,
  ...sendFacts(task),
});

export const dispatched = (task: SendTask, providerMessageId: string, providerStatus: string, now: number, eventId = newEventId()): DeliveryOutcome => ({
  type: 'MessageDispatched',
  payload: { ...base(task, now, eventId), provider_message_id: providerMessageId, provider_status: providerStatus },
});

export const failed = (task: SendTask, reason: string, detail: string, definitive: boolean, now: number, eventId = newEventId()): DeliveryOutcome => ({
  type: 'DeliveryFailed',
  payload: { ...base(task, now, eventId), reason, detail, definitive },
});

/**
 * A recorded outcome as re-emitted for a redelivered decision: one recorded before the outcome
 * events carried the send's facts gets them from the task (same event id: the same outcome).
 */
export function withSendFacts(outcome: DeliveryOutcome, task: SendFacts): DeliveryOutcome {
  if (outcome.payload.recipient) return outcome;
  return { ...outcome, payload: { ...outcome.payload, ...sendFacts(task) } } as DeliveryOutcome;
}

/** Maps a sendText result to the event to append; null when the outcome is not yet known. */
export function toOutcome(task: SendTask, result: SendTextResult, now: number, eventId = newEventId()): DeliveryOutcome | null {
  if (result.kind === 'accepted') return dispatched(task, result.providerMessageId, result.providerStatus, now, eventId);
  if (result.kind === 'failed') return failed(task, result.reason, result.detail, true, now, eventId);
  return null;
}

/** The delivery quality signal the policy engine counts towards an instance's auto-pause check. */
export function deliveryFact(task: Pick<SendTask, 'customerId' | 'instanceId' | 'phone'>, outcome: DeliveryOutcome): DeliveryOutcomeRecorded {
  return {
    type: 'DeliveryOutcomeRecorded',
    customerId: task.customerId,
    at: outcome.payload.occurred_at,
    instanceId: task.instanceId,
    recipient: task.phone,
    delivered: outcome.type === 'MessageDispatched',
  };
}

/**
 * An outcome's records: the outcome on delivery-events, and the quality fact on the customer's
 * stream (folded by the policy engine in order with the sends). The fact's id derives from the
 * outcome's, so a re-emitted outcome yields the same fact, which the engine folds once.
 */
export async function outcomeRecords(codec: EventCodec, task: Pick<SendTask, 'customerId' | 'instanceId' | 'phone' | 'commandId'>, outcome: DeliveryOutcome, trace?: OutgoingRecord['trace']): Promise<OutgoingRecord[]> {
  const fact = { ...toFactRecord(deliveryFact(task, outcome), task.commandId), event_id: derivedEventId(outcome.payload.event_id, 'delivery-fact') };
  return [await codec.encode(outcome.type, outcome.payload as never, trace), await codec.encode('PolicyInputRecorded', fact, trace)];
}
