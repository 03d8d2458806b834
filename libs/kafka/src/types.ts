/** The broker-neutral shapes the rest of the code base uses; only this library knows kafkajs. */
import type { TraceContext } from '@gw/tracing';

export interface OutgoingRecord {
  topic: string;
  key: string;
  value: Buffer;
  headers?: Record<string, string>;
  /**
   * The trace this record continues: the span of the work that caused it (a request, the
   * processing of the record it answers). Written into the record's W3C trace-context headers
   * when it is appended, so whoever reads it continues the same trace (docs/architecture.md "Traces").
   */
  trace?: TraceContext;
}

export interface ConsumedRecord {
  topic: string;
  partition: number;
  offset: string;
  key: string | null;
  value: Buffer | null;
  headers: Record<string, string>;
  timestamp: string;
}

export interface TopicSpec {
  name: string;
  partitions: number;
  /** Replicas of each partition (1 when not given). */
  replicationFactor?: number;
  /** Topic-level configuration, e.g. retention.ms = -1 for an event log kept forever. */
  config?: Record<string, string>;
}

export interface BatchContext {
  topic: string;
  partition: number;
  /** Keeps the group membership alive during long work. */
  heartbeat(): Promise<void>;
}

/**
 * A stage that turns consumed records into records to append. The library appends the outputs
 * and commits the input offsets atomically (one Kafka transaction per batch), so a redelivered
 * batch never yields a second copy of its outputs.
 */
export type TransformBatch = (records: ConsumedRecord[], ctx: BatchContext) => Promise<OutgoingRecord[]>;

export interface RunningConsumer {
  groupId: string;
  /** Resolves once the consumer has joined its group and fetched at least once. */
  ready: Promise<void>;
  isReady(): boolean;
  stop(): Promise<void>;
}

