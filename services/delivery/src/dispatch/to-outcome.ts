import { newEventId, type SendDecided } from '@gw/events';
import type { SendTextResult } from '@gw/evolution';
import type { DeliveryOutcomeRecorded } from '@gw/policy';
import type { DeliveryOutcome } from './delivery-store.ts';

/** Maps a sendText result to the event to append; null when the outcome is not yet known. */
export function toOutcome(decision: SendDecided, result: SendTextResult, now: number): DeliveryOutcome | null {
  const base = {
    event_id: newEventId(),
    correlation_id: decision.correlation_id,
    occurred_at: now,
    customer_id: decision.customer_id,
    instance_id: decision.instance_id,
    message_id: decision.message_id,
    log_id: decision.log_id,
  };
  if (result.kind === 'accepted') {
    return { type: 'MessageDispatched', payload: { ...base, provider_message_id: result.providerMessageId, provider_status: result.providerStatus } };
  }
  if (result.kind === 'failed') {
    return { type: 'DeliveryFailed', payload: { ...base, reason: result.reason, detail: result.detail, definitive: true } };
  }
  return null;
}

/** The delivery quality signal the policy engine counts towards an instance's auto-pause check. */
export function deliveryFact(decision: SendDecided, outcome: DeliveryOutcome): DeliveryOutcomeRecorded {
  return {
    type: 'DeliveryOutcomeRecorded',
    customerId: decision.customer_id,
    at: outcome.payload.occurred_at,
    instanceId: decision.instance_id,
    recipient: decision.recipient,
    delivered: outcome.type === 'MessageDispatched',
  };
}
