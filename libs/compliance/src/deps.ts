import type { Pool } from '@gw/db';
import type { EventCodec, Topics } from '@gw/events';
import type { KafkaInspector } from '@gw/kafka';

/** The settings behind `kafka` and `codec`, so a worker thread can open its own (plain data). */
export interface ComplianceConnection {
  kafkaBrokers: string[];
  /** The inspector's prefix for its throw-away consumer groups (the topic prefix). */
  groupPrefix: string;
  schemaRegistryUrl: string;
  /** The replay reads the recorded entries beside the commands. */
  databaseUrl: string;
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
