import { ApiError, isErrorCode } from '@gw/contract';
import type { DeliveryFailed, MessageDispatched, SendDecided } from '@gw/events';

/** What is known about one send command so far. */
export interface SendProgress {
  decision: SendDecided | null;
  delivery: { type: 'MessageDispatched'; payload: MessageDispatched } | { type: 'DeliveryFailed'; payload: DeliveryFailed } | null;
}

export interface SendSuccessBody {
  success: true;
  /** The contract's words (SendMessageSuccess.status): queued while the delivery is still under way at the deadline. */
  status: 'sent' | 'queued';
  message_id: string;
  log_id: number;
}

export function isFinal(progress: SendProgress): boolean {
  return progress.delivery !== null || progress.decision?.decision === 'rejected';
}

/**
 * The details of the rule a refusal failed on, as the policy engine recorded them (a JSON object
 * in the reason's `detail`). A detail that is missing, not JSON or not an object is answered with
 * the rule's name alone: a refusal is never turned into a 500 by its own details.
 */
export function failedRuleDetails(decision: Pick<SendDecided, 'reasons'>): Record<string, unknown> {
  const failed = decision.reasons.find((r) => r.outcome === 'fail');
  if (!failed?.detail) return { rule: failed?.rule ?? null };
  try {
    const parsed: unknown = JSON.parse(failed.detail);
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
  } catch {
    // Not JSON: the rule's name alone, below.
  }
  return { rule: failed.rule };
}

/**
 * The HTTP answer for what is known at the deadline. Never "failed" for a message that may
 * still be sent: an accepted decision whose delivery is still under way answers status "queued",
 * and a command not yet decided answers 500 with its ids so the caller can retry idempotently.
 */
export function toResponse(progress: SendProgress, ids: { commandId: string; messageId: string }): SendSuccessBody | ApiError {
  const { decision, delivery } = progress;
  if (delivery?.type === 'MessageDispatched') {
    return { success: true, status: 'sent', message_id: delivery.payload.message_id, log_id: delivery.payload.log_id };
  }
  if (delivery?.type === 'DeliveryFailed' && delivery.payload.reason === 'outcome_unknown') {
    // The delivery resolver's final word on a send it cannot check and will not repeat
    // (services/delivery/src/resolve/resolver.ts): neither sent nor certainly not sent.
    return new ApiError('gateway_send_failed', 'The instance did not confirm the message in time and cannot tell whether it sent it: the message may or may not have been delivered. It will not be sent again.', {
      reason: delivery.payload.reason,
      detail: delivery.payload.detail,
      message_id: delivery.payload.message_id,
      log_id: delivery.payload.log_id,
    });
  }
  if (delivery?.type === 'DeliveryFailed' && !delivery.payload.definitive) {
    // Declared failed for lack of an acknowledgement, but the manager may still have sent it.
    return { success: true, status: 'queued', message_id: delivery.payload.message_id, log_id: delivery.payload.log_id };
  }
  if (delivery?.type === 'DeliveryFailed') {
    const words =
      delivery.payload.reason === 'manager_license_required'
        ? // libs/evolution sendText: Evolution 2.4 answered 503 LICENSE_REQUIRED; certainly not sent.
          'The message passed the responsible-messaging checks, but the instance manager (Evolution API) is not activated: open its /manager page and activate its licence there, then send again.'
        : 'The message passed the responsible-messaging checks but could not be delivered through the instance.';
    return new ApiError('gateway_send_failed', words, {
      reason: delivery.payload.reason,
      detail: delivery.payload.detail,
      message_id: delivery.payload.message_id,
      log_id: delivery.payload.log_id,
    });
  }
  if (decision?.decision === 'rejected') {
    const code = decision.error_code && isErrorCode(decision.error_code) ? decision.error_code : 'policy_violation';
    return new ApiError(code, decision.error_message ?? 'The message was refused by the responsible-messaging policy.', {
      ...failedRuleDetails(decision),
      message_id: decision.message_id,
      log_id: decision.log_id,
      policy_version: decision.policy_version,
    });
  }
  if (decision?.decision === 'accepted') {
    return { success: true, status: 'queued', message_id: decision.message_id, log_id: decision.log_id };
  }
  return new ApiError('internal_error', 'The message was recorded but not yet processed. Retry with the same Idempotency-Key to get its outcome.', {
    state: 'pending_decision',
    message_id: ids.messageId,
    command_id: ids.commandId,
  });
}
