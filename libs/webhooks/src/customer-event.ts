import type { GatewayEventEmitted } from '@gw/events';
import { buildWebhookEvent, WEBHOOK_EVENT_FIELDS, WebhookPayloadError, type PayloadIssue, type WebhookEventInput, type WebhookEventName } from './events.ts';

/** What a customer event's record says besides its body: where it comes from. */
export interface CustomerEventOrigin {
  eventId: string;
  correlationId: string;
  occurredAt: number;
  customerId: string;
  instanceId: string;
}

export type BuiltCustomerEvent = { kind: 'built'; record: GatewayEventEmitted; droppedFields: string[] } | { kind: 'refused'; issues: readonly PayloadIssue[] };

const isOptionalField = (event: WebhookEventName, field: string) => WEBHOOK_EVENT_FIELDS[event][field]?.required === false;

/**
 * Every customer event record (GatewayEventEmitted) is made here, whichever service tells the
 * customer (the instance-events ingest, the policy engine's restriction notices), its body by the
 * contract's builder (buildWebhookEvent): validated against spec 2.4/6.3, fields in the contract's
 * order. An optional field sent malformed (an over-long message type, a control character in an
 * id) is left out and the event still goes; an event whose required fields are not valid is
 * refused (the caller logs and counts it), never a stopped stage.
 */
export function buildCustomerEvent<E extends WebhookEventName>(origin: CustomerEventOrigin, input: WebhookEventInput<E>): BuiltCustomerEvent {
  const droppedFields: string[] = [];
  let attempt: Record<string, unknown> = { ...input };
  for (;;) {
    try {
      const built = buildWebhookEvent(attempt as WebhookEventInput<E>);
      const record: GatewayEventEmitted = {
        event_id: origin.eventId,
        correlation_id: origin.correlationId,
        occurred_at: origin.occurredAt,
        customer_id: origin.customerId,
        instance_id: origin.instanceId,
        event: built.event,
        payload: built.body,
      };
      return { kind: 'built', record, droppedFields };
    } catch (error) {
      if (!(error instanceof WebhookPayloadError)) throw error;
      const optional = error.issues.filter((i) => isOptionalField(input.event, i.field) && i.field in attempt);
      // Anything but bad optional fields (a required field, the whole body too large): no event.
      if (optional.length === 0 || optional.length < error.issues.length) return { kind: 'refused', issues: error.issues };
      attempt = { ...attempt };
      for (const issue of optional) {
        delete attempt[issue.field];
        droppedFields.push(issue.field);
      }
    }
  }
}
