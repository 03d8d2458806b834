// TypeScript shapes of the Avro records in /schemas. The .avsc files are the source of truth;
// these types mirror them field for field.

export interface EventBase {
  event_id: string;
  /** The command id that this event belongs to. */
  correlation_id: string;
  /** Unix epoch milliseconds. */
  occurred_at: number;
  customer_id: string;
  instance_id: string;
}

export type MessagePurpose = 'transactional' | 'operational' | 'support' | 'internal_team' | 'authentication';

export interface SendRequested extends EventBase {
  instance_name: string;
  message_id: string;
  phone: string;
  message: string;
  message_purpose: string;
  source: 'api' | 'pbx';
  idempotency_key: string | null;
}

export interface RuleOutcome {
  rule: string;
  outcome: 'pass' | 'fail' | 'skipped';
  /** JSON object text with the rule's machine-readable details, or null. */
  detail: string | null;
}

export interface SendDecided extends EventBase {
  message_id: string;
  log_id: number;
  decision: 'accepted' | 'rejected';
  error_code: string | null;
  error_message: string | null;
  reasons: RuleOutcome[];
  policy_version: string;
  recipient: string;
  message_purpose: string;
  message_digest: string;
  dispatch: { instance_name: string; phone: string; text: string } | null;
  /** The partition whose hash chain the entry belongs to. */
  partition_chain: number;
  prev_hash: string;
  entry_hash: string;
}

export interface MessageDispatched extends EventBase {
  message_id: string;
  log_id: number;
  provider_message_id: string;
  provider_status: string;
}

export interface DeliveryFailed extends EventBase {
  message_id: string;
  log_id: number;
  reason: string;
  detail: string;
  definitive: boolean;
}

/** A policy input (operator action, opt-out, delivery outcome) or an engine-derived fact, as JSON. */
export interface PolicyFactRecord extends EventBase {
  /** Empty string for customer-wide facts. */
  instance_id: string;
  input_type: string;
  payload: string;
}

export interface PbxEventReceived extends EventBase {
  integration_id: number;
  event_type: string;
  payload: string;
  action: 'send' | 'record' | 'acknowledge';
}

export interface InstanceEventReceived extends EventBase {
  instance_name: string;
  manager_instance: string;
  event: string;
  digest: string;
  payload: string;
}

export interface GatewayEventEmitted extends EventBase {
  event: string;
  payload: string;
}

/** A record a stage gave up on, kept whole (schemas/RecordDeadLettered.avsc). */
export interface RecordDeadLettered extends EventBase {
  stage: string;
  error: string;
  tries: number;
  source_topic: string;
  source_partition: number;
  source_offset: string;
  source_timestamp: string;
  source_key: string | null;
  source_value: Buffer | null;
  source_headers: Record<string, string>;
}

export interface DeadLetterResolved extends EventBase {
  dead_letter_id: string;
  resolution: 'retried' | 'discarded';
  by: string;
  reason: string;
}

export interface EventPayloads {
  SendRequested: SendRequested;
  SendDecided: SendDecided;
  MessageDispatched: MessageDispatched;
  DeliveryFailed: DeliveryFailed;
  PolicyInputRecorded: PolicyFactRecord;
  PolicyEventEmitted: PolicyFactRecord;
  PbxEventReceived: PbxEventReceived;
  InstanceEventReceived: InstanceEventReceived;
  GatewayEventEmitted: GatewayEventEmitted;
  RecordDeadLettered: RecordDeadLettered;
  DeadLetterResolved: DeadLetterResolved;
}

export type EventType = keyof EventPayloads;

export type AnyEvent = { [K in EventType]: { type: K; payload: EventPayloads[K] } }[EventType];
