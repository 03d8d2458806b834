// The events' TypeScript types, generated from the Avro schemas in /schemas (make events):
// src/generated holds one file per schema, and a unit test keeps them in step with the schemas.
import type { AccountChanged } from './generated/AccountChanged.ts';
import type { DeadLetterResolved } from './generated/DeadLetterResolved.ts';
import type { DeliveryFailed } from './generated/DeliveryFailed.ts';
import type { GatewayEventEmitted } from './generated/GatewayEventEmitted.ts';
import type { InstanceEventReceived } from './generated/InstanceEventReceived.ts';
import type { MessageDispatched } from './generated/MessageDispatched.ts';
import type { PbxEventReceived } from './generated/PbxEventReceived.ts';
import type { PolicyEventEmitted } from './generated/PolicyEventEmitted.ts';
import type { PolicyInputRecorded } from './generated/PolicyInputRecorded.ts';
import type { RecordDeadLettered } from './generated/RecordDeadLettered.ts';
import type { ChatgatewayEvents, SendDecided } from './generated/SendDecided.ts';
import type { SendRequested } from './generated/SendRequested.ts';

export type {
  AccountChanged,
  DeadLetterResolved,
  DeliveryFailed,
  GatewayEventEmitted,
  InstanceEventReceived,
  MessageDispatched,
  PbxEventReceived,
  RecordDeadLettered,
  SendDecided,
  SendRequested,
};

/** The fields every event has (each schema lists them; this names what they share). */
export type EventBase = Pick<SendRequested, 'event_id' | 'correlation_id' | 'occurred_at' | 'customer_id' | 'instance_id'>;

/** One rule's outcome in a decision (SendDecided.reasons). */
export type RuleOutcome = ChatgatewayEvents.RuleOutcome;

/** A policy input (operator action, opt-out, delivery outcome) or an engine-derived fact, as JSON: both facts' records have this shape. */
export type PolicyFactRecord = PolicyInputRecorded;

export interface EventPayloads {
  SendRequested: SendRequested;
  SendDecided: SendDecided;
  MessageDispatched: MessageDispatched;
  DeliveryFailed: DeliveryFailed;
  PolicyInputRecorded: PolicyInputRecorded;
  PolicyEventEmitted: PolicyEventEmitted;
  PbxEventReceived: PbxEventReceived;
  InstanceEventReceived: InstanceEventReceived;
  GatewayEventEmitted: GatewayEventEmitted;
  RecordDeadLettered: RecordDeadLettered;
  DeadLetterResolved: DeadLetterResolved;
  AccountChanged: AccountChanged;
}

export type EventType = keyof EventPayloads;

export type AnyEvent = { [K in EventType]: { type: K; payload: EventPayloads[K] } }[EventType];
