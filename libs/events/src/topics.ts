import type { TopicSpec } from '@gw/kafka';
import type { EventType } from './event-types.ts';

/**
 * Logical topics. Every topic is keyed by customer id so that one customer's commands, the inputs
 * that change its policy decisions, and the decisions themselves stay in order on one partition.
 */
export const TOPIC_NAMES = {
  customerEvents: 'customer-events.v1',
  policyDecisions: 'policy-decisions.v1',
  deliveryEvents: 'delivery-events.v1',
  instanceEvents: 'instance-events.v1',
  gatewayEvents: 'gateway-events.v1',
  /** Records the stages gave up on, and their resolutions (gatewayctl dlq). */
  deadLetters: 'dead-letters.v1',
  /** Who changed what in customers' accounts (dashboard and gatewayctl): the audit trail. */
  accountEvents: 'account-events.v1',
} as const;

export type TopicName = keyof typeof TOPIC_NAMES;

export const EVENT_TOPIC: Record<EventType, TopicName> = {
  SendRequested: 'customerEvents',
  SendDecided: 'policyDecisions',
  MessageDispatched: 'deliveryEvents',
  DeliveryFailed: 'deliveryEvents',
  PolicyInputRecorded: 'customerEvents',
  PolicyEventEmitted: 'policyDecisions',
  PbxEventReceived: 'customerEvents',
  InstanceEventReceived: 'instanceEvents',
  GatewayEventEmitted: 'gatewayEvents',
  RecordDeadLettered: 'deadLetters',
  DeadLetterResolved: 'deadLetters',
  AccountChanged: 'accountEvents',
};

export class Topics {
  /** `replication`: of the topics `specs()` describes (config.topicReplication); the names do not depend on it. */
  constructor(
    readonly prefix: string,
    readonly partitions: number,
    readonly replication: { factor: number; minInsync: number } = { factor: 1, minInsync: 1 },
  ) {}

  name(topic: TopicName): string {
    return `${this.prefix}${TOPIC_NAMES[topic]}`;
  }

  forEvent(type: EventType): string {
    return this.name(EVENT_TOPIC[type]);
  }

  /** Event topics are the system of record: kept forever so the log can be replayed from zero. */
  specs(): TopicSpec[] {
    return (Object.keys(TOPIC_NAMES) as TopicName[]).map((topic) => ({
      name: this.name(topic),
      partitions: this.partitions,
      replicationFactor: this.replication.factor,
      config: { 'retention.ms': '-1', 'retention.bytes': '-1', 'min.insync.replicas': String(this.replication.minInsync) },
    }));
  }

  group(name: string): string {
    return `${this.prefix}${name}`;
  }
}
