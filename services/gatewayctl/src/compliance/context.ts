import type { ComplianceDeps } from '@gw/compliance';
import type { GatewayConfig } from '@gw/config';
import { createPool, type Pool } from '@gw/db';
import { EventCodec, Topics } from '@gw/events';
import { KafkaInspector } from '@gw/kafka';

/** The operator's connections for the compliance commands (with a connection: verify replays on a worker thread). */
export async function complianceDeps(config: GatewayConfig, pool?: Pool): Promise<ComplianceDeps> {
  const topics = new Topics(config.topicPrefix, config.topicPartitions);
  return {
    // Operator passes read and rebuild whole projections: statements bounded, but generously.
    pool: pool ?? (await createPool(config.databaseUrl, { maxConnections: 3, ...config.database, statementTimeoutMs: 600_000 })),
    kafka: new KafkaInspector(config.kafkaBrokers, config.topicPrefix),
    // Decoding needs no registration: schemas are fetched by the id in each record.
    codec: new EventCodec(config.schemaRegistryUrl, topics),
    topics,
    connection: { kafkaBrokers: config.kafkaBrokers, groupPrefix: config.topicPrefix, schemaRegistryUrl: config.schemaRegistryUrl, databaseUrl: config.databaseUrl },
  };
}
