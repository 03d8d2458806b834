import { randomUUID } from 'node:crypto';
import { toAccountChanged, type AccountChange, type AuditTrail } from '@gw/accounts';
import type { GatewayConfig } from '@gw/config';
import { EventCodec, Topics } from '@gw/events';
import { KafkaClient } from '@gw/kafka';
import { createLogger } from '@gw/observability';
import type { PolicyEvent } from '@gw/policy';
import { appendFacts } from '@gw/policy-log';

/**
 * gatewayctl's appends to Kafka, on one connection made when first needed: operator facts (plan
 * changes, overrides, suppressions, pauses…) to the customer's stream, where the policy engine
 * folds them in order with the sends (nothing changes a policy decision except through this
 * log), and account changes to the audit trail (by: the operator).
 */
export class FactLog implements AuditTrail {
  private ready: Promise<{ kafka: KafkaClient; codec: EventCodec }> | undefined;

  constructor(private readonly config: GatewayConfig) {}

  private connect() {
    this.ready ??= (async () => {
      const topics = new Topics(this.config.topicPrefix, this.config.topicPartitions, this.config.topicReplication);
      const kafka = new KafkaClient({ brokers: this.config.kafkaBrokers, clientId: 'gatewayctl', logger: createLogger('gatewayctl', this.config.gatewayctl.logLevel, true) });
      await kafka.ensureTopics(topics.specs());
      const codec = new EventCodec(this.config.schemaRegistryUrl, topics);
      await codec.init(['PolicyInputRecorded', 'AccountChanged']);
      return { kafka, codec };
    })();
    return this.ready;
  }

  /** Resolves once the broker has acknowledged every fact: later sends are ordered after them. */
  async append(...facts: PolicyEvent[]): Promise<{ correlation_id: string; appended: string[] }> {
    const { kafka, codec } = await this.connect();
    const correlationId = `op_${randomUUID()}`;
    await appendFacts(kafka, codec, facts, correlationId);
    return { correlation_id: correlationId, appended: facts.map((f) => f.type) };
  }

  async record(change: AccountChange): Promise<void> {
    const { kafka, codec } = await this.connect();
    await kafka.send([await codec.encode('AccountChanged', toAccountChanged(change))]);
  }

  async close(): Promise<void> {
    if (this.ready) await (await this.ready).kafka.close();
  }
}
