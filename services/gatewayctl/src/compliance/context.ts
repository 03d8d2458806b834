import type { GatewayConfig } from '@gw/config';
import { createPool, type Pool } from '@gw/db';
import { EventCodec, Topics } from '@gw/events';
import { KafkaInspector } from '@gw/kafka';

/** The settings behind `kafka` and `codec`, so a worker thread can open its own (plain data). */
export interface ComplianceConnection {
  kafkaBrokers: string[];
  /** The inspector's prefix for its throw-away consumer groups (the topic prefix). */
  groupPrefix: string;
  schemaRegistryUrl: string;
}

/** What the compliance functions need: Postgres, Kafka, the codec and topic names. */
export interface ComplianceDeps {
  pool: Pool;
  kafka: KafkaInspector;
  codec: EventCodec;
  topics: Topics;
  /** Without it, verify replays on the calling thread instead of a worker thread. */
  connection?: ComplianceConnection;
}

export async function complianceDeps(config: GatewayConfig, pool?: Pool): Promise<ComplianceDeps> {
  const topics = new Topics(config.topicPrefix, config.topicPartitions);
  return {
    // Operator passes read and rebuild whole projections: statements bounded, but generously.
    pool: pool ?? (await createPool(config.databaseUrl, { maxConnections: 3, ...config.database, statementTimeoutMs: 600_000 })),
    kafka: new KafkaInspector(config.kafkaBrokers, config.topicPrefix),
    // Decoding needs no registration: schemas are fetched by the id in each record.
    codec: new EventCodec(config.schemaRegistryUrl, topics),
    topics,
    connection: { kafkaBrokers: config.kafkaBrokers, groupPrefix: config.topicPrefix, schemaRegistryUrl: config.schemaRegistryUrl },
  };
}
