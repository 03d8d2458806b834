// The audit trail of account changes: one AccountChanged event per change, on the account-events
// topic, written alike by the dashboard (by: the signed-in user) and gatewayctl (by: the
// operator). Details are the non-secret settings of the change; a secret never goes in.
import { randomUUID } from 'node:crypto';
import { newEventId, type AccountChanged, type EventCodec } from '@gw/events';

export interface AccountChange {
  customerId: string;
  /** What changed, as <thing>.<verb>: instance.created, api_key.revoked, webhook.configured… */
  action: string;
  /** The id of the thing changed. */
  subjectId: string;
  instanceId?: string;
  by: string;
  via: AccountChanged['via'];
  details?: Record<string, string | number | boolean | string[] | null>;
  correlationId?: string;
}

export interface AuditTrail {
  /** Resolves once the change is recorded (acknowledged by the broker). */
  record(change: AccountChange): Promise<void>;
}

export function toAccountChanged(change: AccountChange, now = Date.now()): AccountChanged {
  return {
    event_id: newEventId(),
    correlation_id: change.correlationId ?? `chg_${randomUUID()}`,
    occurred_at: now,
    customer_id: change.customerId,
    instance_id: change.instanceId ?? '',
    action: change.action,
    subject_id: change.subjectId,
    by: change.by,
    via: change.via,
    details: JSON.stringify(change.details ?? {}),
  };
}

type EncodedRecord = Awaited<ReturnType<EventCodec['encode']>>;

/** An audit trail that appends to Kafka through a producer the caller owns. */
export function kafkaAuditTrail(out: { send(records: EncodedRecord[]): Promise<unknown> }, codec: EventCodec): AuditTrail {
  return {
    async record(change) {
      await out.send([await codec.encode('AccountChanged', toAccountChanged(change))]);
    },
  };
}
