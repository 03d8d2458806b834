// Read-only inspection of topics and groups for operator and compliance tooling: offsets, group
// members, and a bounded "read a topic to its end" reader.
import { randomUUID } from 'node:crypto';
import { Kafka, logLevel } from 'kafkajs';
import { toConsumed } from './headers.ts';
import type { ConsumedRecord } from './types.ts';
import { retryRetriable } from './retriable.ts';

export interface PartitionRange {
  partition: number;
  /** First offset still in the log. */
  low: bigint;
  /** Last stable offset (read_committed): every committed record lies below it. */
  end: bigint;
}

export interface ReadOptions {
  /** Offsets to stop at, per partition (fetched with endOffsets beforehand). */
  ends: Map<number, PartitionRange>;
  /**
   * First offset to read, per partition (e.g. from offsetsAtTime); a partition not listed, or
   * listed below its low offset, is read from its low offset. Default: every partition from its start.
   */
  from?: Map<number, bigint>;
  /** Called for each fetched batch of one partition, in offset order; batches of one partition never overlap. */
  onBatch(records: ConsumedRecord[], partition: number): Promise<void> | void;
  /** How many partitions are processed at once (each still strictly in order). */
  concurrency?: number;
  /** Fails the read when no partition has moved for this long. */
  stallMs?: number;
}

export class KafkaInspector {
  private readonly kafka: Kafka;

  constructor(brokers: string[], private readonly groupPrefix: string) {
    this.kafka = new Kafka({ clientId: 'gateway-inspector', brokers, logLevel: logLevel.NOTHING, retry: { retries: 8, initialRetryTime: 100 } });
  }

  /**
   * Runs read-only admin work, repeated while Kafka answers with something it marks retriable:
   * asking the offsets of a topic made a moment ago can answer "not the leader" (kafkajs passes
   * that on; retriable.ts).
   */
  private async withAdmin<T>(work: (admin: ReturnType<Kafka['admin']>) => Promise<T>): Promise<T> {
    return retryRetriable(async () => {
      const admin = this.kafka.admin();
      await admin.connect();
      try {
        return await work(admin);
      } finally {
        await admin.disconnect();
      }
    });
  }

  /** Low and end (last stable) offsets of every partition of a topic. */
  async endOffsets(topic: string): Promise<Map<number, PartitionRange>> {
    return this.withAdmin(async (admin) => {
      const offsets = await admin.fetchTopicOffsets(topic);
      return new Map(offsets.map((o) => [o.partition, { partition: o.partition, low: BigInt(o.low), end: BigInt(o.high) }]));
    });
  }

  /** Whether the topic exists (reading or asking offsets of a missing topic only fails after retries). */
  async hasTopic(topic: string): Promise<boolean> {
    return this.withAdmin(async (admin) => (await admin.listTopics()).includes(topic));
  }

  /**
   * Per partition, the first offset whose record timestamp is at or after `timestamp` (Unix ms),
   * or the partition's end when there is none: a start position for readToEnd's `from`.
   */
  async offsetsAtTime(topic: string, timestamp: number): Promise<Map<number, bigint>> {
    return this.withAdmin(async (admin) => {
      const offsets = await admin.fetchTopicOffsetsByTimestamp(topic, timestamp);
      return new Map(offsets.map((o) => [o.partition, BigInt(o.offset)]));
    });
  }

  /** A group's committed offsets on a topic; null for a partition it has never committed. */
  async committedOffsets(groupId: string, topic: string): Promise<Map<number, bigint | null>> {
    return this.withAdmin(async (admin) => {
      const [found] = await admin.fetchOffsets({ groupId, topics: [topic] });
      return new Map((found?.partitions ?? []).map((p) => [p.partition, p.offset === '-1' ? null : BigInt(p.offset)]));
    });
  }

  /** The members of a consumer group right now, and its state (Stable, Empty, Dead…). */
  async groupMembers(groupId: string): Promise<{ state: string; members: Array<{ memberId: string; clientId: string; clientHost: string }> }> {
    return this.withAdmin(async (admin) => {
      const { groups } = await admin.describeGroups([groupId]);
      const group = groups[0];
      return { state: group?.state ?? 'Dead', members: (group?.members ?? []).map((m) => ({ memberId: m.memberId, clientId: m.clientId, clientHost: m.clientHost })) };
    });
  }

  /**
   * Reads a topic from its first offset (or from options.from) up to the given end offsets
   * (committed records only) and returns once every partition reached its end: the position is
   * followed through the consumer's batch events, which also cover batches of transaction
   * markers and aborted records that are never handed to the application. Records at or past the
   * end are not delivered. Uses a throw-away group that commits nothing (start positions from
   * options.from are set on it before it joins) and is deleted afterwards.
   */
  async readToEnd(topic: string, options: ReadOptions): Promise<void> {
    const position = new Map<number, bigint>();
    const start = (range: PartitionRange) => {
      const from = options.from?.get(range.partition);
      return from !== undefined && from > range.low ? from : range.low;
    };
    for (const [partition, range] of options.ends) position.set(partition, start(range));
    const remaining = () => [...options.ends.values()].filter((r) => (position.get(r.partition) ?? 0n) < r.end);
    if (remaining().length === 0) return;

    const groupId = `${this.groupPrefix}inspector-${randomUUID()}`;
    const consumer = this.kafka.consumer({ groupId, sessionTimeout: 30_000, maxWaitTimeInMs: 250, readUncommitted: false, maxBytesPerPartition: 4 * 1024 * 1024 });
    let finish!: () => void;
    let fail!: (error: Error) => void;
    const done = new Promise<void>((resolve, reject) => ((finish = resolve), (fail = reject)));
    let lastMove = Date.now();
    consumer.on(consumer.events.END_BATCH_PROCESS, ({ payload }) => {
      if (payload.topic !== topic) return;
      const next = BigInt(payload.lastOffset) + 1n;
      if (next > (position.get(payload.partition) ?? 0n)) {
        position.set(payload.partition, next);
        lastMove = Date.now();
      }
      if (remaining().length === 0) finish();
    });
    consumer.on(consumer.events.CRASH, ({ payload }) => fail(new Error(`reading ${topic} failed: ${String(payload.error)}`)));
    const stallMs = options.stallMs ?? 60_000;
    const watchdog = setInterval(() => {
      if (Date.now() - lastMove > stallMs) {
        const left = remaining().map((r) => `${r.partition}@${position.get(r.partition)}/${r.end}`).join(', ');
        fail(new Error(`reading ${topic} stalled for ${stallMs} ms (partition@position/end: ${left})`));
      }
    }, 1000);

    try {
      // Start positions are committed for the fresh group before it joins: the consumer then
      // begins there, and partitions without one begin at their first offset.
      const starts = [...options.ends.values()].filter((r) => position.get(r.partition)! > r.low);
      if (starts.length > 0) {
        await this.withAdmin((admin) => admin.setOffsets({ groupId, topic, partitions: starts.map((r) => ({ partition: r.partition, offset: String(position.get(r.partition)) })) }));
      }
      await consumer.connect();
      await consumer.subscribe({ topics: [topic], fromBeginning: true });
      await consumer.run({
        autoCommit: false,
        partitionsConsumedConcurrently: options.concurrency ?? 1,
        eachBatch: async ({ batch, heartbeat }) => {
          const end = options.ends.get(batch.partition)?.end ?? 0n;
          const first = options.from?.get(batch.partition) ?? 0n;
          const records: ConsumedRecord[] = [];
          for (const message of batch.messages) {
            if (BigInt(message.offset) >= end) break;
            if (BigInt(message.offset) < first) continue;
            records.push(toConsumed(batch.topic, batch.partition, message));
          }
          try {
            if (records.length > 0) await options.onBatch(records, batch.partition);
          } catch (error) {
            fail(error as Error);
            throw error;
          }
          await heartbeat();
        },
      });
      await done;
    } finally {
      clearInterval(watchdog);
      await consumer.disconnect().catch(() => undefined);
      await this.withAdmin((admin) => admin.deleteGroups([groupId])).catch(() => undefined);
    }
  }
}
