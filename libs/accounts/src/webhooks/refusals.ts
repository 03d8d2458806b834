import type { WebhookDestinationError, WebhookSubscriptionError } from '@gw/webhooks';
import { AccountError, type AccountErrorCode } from '../errors.ts';

/** Which refusal a webhook operation ended in, for a caller that words it its own way (the dashboard) or adds its own advice (gatewayctl). */
export type WebhookRefusal =
  | 'no_instance'
  | 'no_webhook'
  | 'disabled'
  | 'no_delivery'
  | 'in_flight'
  | 'events_refused'
  | 'destination_refused'
  | 'destination_changed'
  | 'rules_invalid'
  | 'no_topic'
  | 'invalid_input';

export interface WebhookRefusalDetails {
  instanceId?: string;
  /** For `disabled`: why the endpoint was disabled ('gone', 'failing_too_long'), if recorded. */
  disabledReason?: string | null;
  /** For `disabled`: what was refused ("a resend", "a recover"); absent when a pause was refused. */
  doing?: string;
  /** For `destination_refused`: the SSRF guard's refusal, with its code and the blocked addresses. */
  destination?: WebhookDestinationError;
  /** For `events_refused`: the subscription resolver's refusal, naming the unknown words. */
  subscription?: WebhookSubscriptionError;
}

/**
 * A webhook operation refused what it was asked. The message is plain and names no tool; the
 * refusal and its details let each caller say what to do next in its own terms.
 */
export class WebhookError extends AccountError {
  constructor(
    code: AccountErrorCode,
    readonly refusal: WebhookRefusal,
    message: string,
    readonly details: WebhookRefusalDetails = {},
  ) {
    super(code, message);
    this.name = 'WebhookError';
  }
}
