import { Kafka, logLevel as KafkaLogLevel, CompressionTypes, Partitioners, type Producer, type Consumer, type LogEntry } from 'kafkajs';
import type { Logger } from 'pino';
import { describeError } from '@gw/observability';
import { withTraceHeaders } from '@gw/tracing';
import { headerValue, toConsumed } from './headers.ts';
import { GroupCommit, ItemFailed } from '@gw/batching';
import { transactionCoalescer } from './transaction-coalescer.ts';
import { ensureTopicsOn } from './ensure-topics.ts';
import { processBatch, type StageFaults } from './stage-runner.ts';
import type {
  ConsumedRecord,
  OutgoingRecord,
  RunningConsumer,
  TopicSpec,
  TransformBatch,
} from './types.ts';

export interface KafkaClientOptions {
  brokers: string[];
  clientId: string;
  logger: Logger;
  /** How long the group waits for a silent member before rebalancing its partitions. */
  sessionTimeoutMs?: number;
  /**
   * The longest a fetch waits for data. Kept short: a read-committed fetch that finds only
   * records of an open transaction is not woken when that transaction commits, so this bounds
   * the delay each transactional hop can add.
   */
  fetchMaxWaitMs?: number;
  /** A fetch waits (up to fetchMaxWaitMs) until this many bytes are there: fewer, larger batches under load. */
  fetchMinBytes?: number;
  /**
   * How old the cached cluster metadata (partition leaders, brokers) may get before a send or
   * fetch asks for it again. kafkajs 2.2 refreshes it on connection errors but not when a leader
   * it has cached is a broker that left the cluster ("Broker N not found in the cached
   * metadata"): with its default of 5 minutes, a killed broker stalled appends for as long.
   */
  metadataMaxAgeMs?: number;
  /** Partition batches a stage works on at once. */
  partitionsConcurrently?: number;
  /** Called when a consumer stops for good (an error kafkajs will not retry). */
  onFatal?: (groupId: string, error: Error) => void;
  /** Records waiting to be appended at most; past it an append is refused at once with QueueFull. */
  appendQueueLimit?: number;
  /** 'transactions' (default): outputs and offsets commit atomically. 'idempotent': see transform(). */
  exactlyOnce?: 'transactions' | 'idempotent';
}

export interface ListenOptions {
  groupId: string;
  topics: string[];
  fromBeginning: boolean;
  onRecord(record: ConsumedRecord): Promise<void> | void;
  /**
   * Only the records whose header `header` has a value `wanted` accepts reach onRecord; the others
   * are passed over in their fetched batch, one header read each, never turned into a record.
   * For a request-reply listener, which wants a few of the records it reads (its own replies).
   */
  select?: { header: string; wanted(value: string): boolean };
  /**
   * false: its offsets are never committed (by default after every batch, a request and a broker
   * write each). For a listener with a group of its own that starts from the latest offset: a
   * restart is a new group anyway, and after a rejoin it starts from the latest offset again, so
   * whatever it passes over then must be found another way (the reply router's fallback poll).
   */
  commitOffsets?: boolean;
}

export interface TransformOptions {
  groupId: string;
  topics: string[];
  /** Prefix of the transactional id. */
  transactionalIdPrefix: string;
  /**
   * This instance's slot in the group (CONSUMER_INSTANCE_ID), part of the transactional id:
   * distinct for every running instance, the same for an instance and its restart.
   */
  instanceId?: string;
  transform: TransformBatch;
  /** What a failing batch or record does: retried, taken apart, dead-lettered (stage-runner.ts). */
  faults: StageFaults;
  partitionsConsumedConcurrently?: number;
}

// Every append goes through here (group-committed sends and transactions alike): the one place
// a record's trace context becomes its traceparent header.
function toMessages(records: OutgoingRecord[]) {
  return records.map((r) => ({ key: r.key, value: r.value, headers: r.trace ? withTraceHeaders(r.headers, r.trace) : r.headers }));
}

// The broker refuses a record batch over message.max.bytes (1 MB by default), and a transaction
// may carry a whole fetch's worth of outputs: sends are split well below that.
const MAX_SEND_BYTES = 512 * 1024;

/**
 * Groups records by topic, keeping their order, in chunks each small enough for one produce
 * request; each chunk names the indexes of its records in `records`.
 */
export function byTopic(records: OutgoingRecord[]) {
  const chunks: Array<{ topic: string; messages: ReturnType<typeof toMessages>; indexes: number[] }> = [];
  const open = new Map<string, { topic: string; messages: ReturnType<typeof toMessages>; indexes: number[]; bytes: number }>();
  records.forEach((record, index) => {
    const size = record.value.length + record.key.length + 64;
    let chunk = open.get(record.topic);
    if (!chunk || (chunk.bytes + size > MAX_SEND_BYTES && chunk.messages.length > 0)) {
      chunk = { topic: record.topic, messages: [], indexes: [], bytes: 0 };
      open.set(record.topic, chunk);
      chunks.push(chunk);
    }
    chunk.messages.push(...toMessages([record]));
    chunk.indexes.push(index);
    chunk.bytes += size;
  });
  return chunks.map(({ topic, messages, indexes }) => ({ topic, messages, indexes }));
}

/**
 * Sends records chunk by chunk and answers per record: the records of chunks that went out
 * succeed even when a later chunk fails. After a failed chunk, the topic's later chunks are not
 * tried (their records would land ahead of the failed ones); other topics still go.
 */
export async function sendByTopic(records: OutgoingRecord[], send: (chunk: { topic: string; messages: ReturnType<typeof toMessages> }) => Promise<unknown>): Promise<Array<void | ItemFailed>> {
  const results = new Array<void | ItemFailed>(records.length).fill(undefined);
  const failed = new Map<string, unknown>();
  for (const { topic, messages, indexes } of byTopic(records)) {
    let error = failed.get(topic);
    if (error === undefined) {
      try {
        await send({ topic, messages });
        continue;
      } catch (thrown) {
        error = thrown;
        failed.set(topic, thrown);
      }
    }
    for (const index of indexes) results[index] = new ItemFailed(error);
  }
  return results;
}

function kafkaLogCreator(logger: Logger) {
  return () =>
    ({ level, log }: LogEntry) => {
      const { message, ...extra } = log;
      const fields = { kafka: extra };
      if (level === KafkaLogLevel.ERROR) logger.error(fields, message);
      else if (level === KafkaLogLevel.WARN) logger.warn(fields, message);
      else logger.debug(fields, message);
    };
}

export class KafkaClient {
  private readonly kafka: Kafka;
  private readonly logger: Logger;
  private readonly sessionTimeoutMs: number;
  private readonly fetchMaxWaitMs: number;
  private readonly fetchMinBytes: number;
  private readonly metadataMaxAge: number;
  private readonly partitionsConcurrently: number;
  private readonly exactlyOnce: 'transactions' | 'idempotent';
  private readonly onFatal: ((groupId: string, error: Error) => void) | undefined;
  private sharedProducer: Promise<Producer> | undefined;
  private readonly appends: GroupCommit<OutgoingRecord>;
  private readonly closers: Array<() => Promise<void>> = [];

  constructor(options: KafkaClientOptions) {
    this.logger = options.logger;
    this.sessionTimeoutMs = options.sessionTimeoutMs ?? 10_000;
    this.fetchMaxWaitMs = options.fetchMaxWaitMs ?? 50;
    this.fetchMinBytes = options.fetchMinBytes ?? 1;
    this.metadataMaxAge = options.metadataMaxAgeMs ?? 5_000;
    this.partitionsConcurrently = options.partitionsConcurrently ?? 3;
    this.exactlyOnce = options.exactlyOnce ?? 'idempotent';
    this.onFatal = options.onFatal;
    this.appends = new GroupCommit<OutgoingRecord>((records) => this.sendNow(records), { maxQueued: options.appendQueueLimit ?? 10_000 });
    this.kafka = new Kafka({
      clientId: options.clientId,
      brokers: options.brokers,
      logLevel: KafkaLogLevel.WARN,
      logCreator: kafkaLogCreator(options.logger),
      retry: { retries: 8, initialRetryTime: 100 },
    });
  }

  /** Creates the topics that are missing and waits for their leaders (ensure-topics.ts). */
  async ensureTopics(specs: TopicSpec[]): Promise<void> {
    const admin = this.kafka.admin();
    await admin.connect();
    try {
      await ensureTopicsOn(admin, specs);
    } finally {
      await admin.disconnect();
    }
  }

  /** Appends records with an idempotent producer; resolves once the broker has acknowledged them all. */
  async send(records: OutgoingRecord[]): Promise<void> {
    if (records.length === 0) return;
    await this.appends.submit(records);
  }

  private async sendNow(records: OutgoingRecord[]): Promise<Array<void | ItemFailed>> {
    const producer = await this.producer();
    return sendByTopic(records, (chunk) => producer.sendBatch({ topicMessages: [chunk], acks: -1, compression: CompressionTypes.None }));
  }

  private producer(): Promise<Producer> {
    if (!this.sharedProducer) {
      const producer = this.kafka.producer({ metadataMaxAge: this.metadataMaxAge, idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false, createPartitioner: Partitioners.DefaultPartitioner });
      this.sharedProducer = producer.connect().then(() => producer);
      this.closers.push(async () => producer.disconnect());
    }
    return this.sharedProducer;
  }

  /** A read-only subscriber, e.g. for request-reply listeners. Offsets are committed automatically. */
  async listen(options: ListenOptions): Promise<RunningConsumer> {
    const consumer = this.kafka.consumer({ metadataMaxAge: this.metadataMaxAge, groupId: options.groupId, sessionTimeout: this.sessionTimeoutMs, maxWaitTimeInMs: this.fetchMaxWaitMs });
    const running = this.trackReadiness(consumer, options.groupId);
    await consumer.connect();
    await consumer.subscribe({ topics: options.topics, fromBeginning: options.fromBeginning });
    const commits = { autoCommit: options.commitOffsets ?? true };
    const select = options.select;
    if (select) {
      await consumer.run({
        ...commits,
        // Resolved whole when it returns (eachBatchAutoResolve): the records passed over are read.
        eachBatch: async ({ batch }) => {
          for (const message of batch.messages) {
            const value = headerValue(message.headers, select.header);
            if (value !== undefined && select.wanted(value)) await options.onRecord(toConsumed(batch.topic, batch.partition, message));
          }
        },
      });
      return running;
    }
    await consumer.run({
      ...commits,
      eachMessage: async ({ topic, partition, message }) => {
        await options.onRecord(toConsumed(topic, partition, message));
      },
    });
    return running;
  }

  /**
   * Consume, transform, produce: each batch's outputs and its input offsets are committed in one
   * Kafka transaction. Downstream consumers read committed records only (the kafkajs default).
   */
  async transform(options: TransformOptions): Promise<RunningConsumer> {
    const consumer = this.kafka.consumer({
      metadataMaxAge: this.metadataMaxAge,
      groupId: options.groupId,
      sessionTimeout: this.sessionTimeoutMs,
      maxWaitTimeInMs: this.fetchMaxWaitMs,
      minBytes: this.fetchMinBytes,
      readUncommitted: false,
    });
    // Transactions: one transactional producer per consumer instance. Its id is stable across
    // restarts, so a restarted instance fences its dead predecessor and aborts any transaction it
    // left open at once (a fresh id would leave readers waiting for the transaction timeout).
    // Idempotent mode: outputs are appended first, offsets committed after; a batch replayed
    // after a crash re-emits identical records, which the stages' own guards make harmless.
    const transactional = this.exactlyOnce === 'transactions'
      ? this.kafka.producer({
          metadataMaxAge: this.metadataMaxAge,
          transactionalId: `${options.transactionalIdPrefix}-${options.instanceId ?? '0'}`,
          idempotent: true,
          createPartitioner: Partitioners.DefaultPartitioner,
          maxInFlightRequests: 1,
          transactionTimeout: 30_000,
        })
      : null;
    const producer = transactional ? transactional.connect().then(() => transactional) : null;
    const coalescer = producer ? transactionCoalescer(producer, options.groupId, byTopic) : null;
    // Idempotent mode: partitions that finish while an offset commit is in flight share the next one.
    const offsetCommits = new GroupCommit<{ topic: string; partition: number; offset: string }>(async (items) => {
      const latest = new Map<string, { topic: string; partition: number; offset: string }>();
      for (const item of items) {
        const key = `${item.topic}:${item.partition}`;
        const seen = latest.get(key);
        if (!seen || BigInt(item.offset) > BigInt(seen.offset)) latest.set(key, item);
      }
      await consumer.commitOffsets([...latest.values()]);
    });
    const commit = async (outputs: OutgoingRecord[], topic: string, partition: number, nextOffset: string) => {
      if (coalescer) return coalescer.submit([{ outputs, topic, partition, nextOffset }]);
      await this.send(outputs);
      await offsetCommits.one({ topic, partition, offset: nextOffset });
    };
    const running = this.trackReadiness(consumer, options.groupId, async () => {
      if (producer) await (await producer).disconnect().catch(() => undefined);
    });
    await consumer.connect();
    await consumer.subscribe({ topics: options.topics, fromBeginning: true });
    await consumer.run({
      autoCommit: false,
      eachBatchAutoResolve: false,
      partitionsConsumedConcurrently: options.partitionsConsumedConcurrently ?? this.partitionsConcurrently,
      eachBatch: async ({ batch, heartbeat, isRunning, isStale, resolveOffset }) => {
        if (!isRunning() || isStale() || batch.messages.length === 0) return;
        const records = batch.messages.map((m) => toConsumed(batch.topic, batch.partition, m));
        await processBatch(records, options.transform, options.faults, {
          topic: batch.topic,
          partition: batch.partition,
          heartbeat,
          isActive: () => isRunning() && !isStale(),
          commit: (outputs, nextOffset) => commit(outputs, batch.topic, batch.partition, nextOffset),
          resolveOffset,
        });
        await heartbeat();
      },
    });
    return running;
  }

  private trackReadiness(
    consumer: Consumer,
    groupId: string,
    extraClose?: () => Promise<void>,
  ): RunningConsumer {
    let joined = false;
    let ready = false;
    let markReady!: () => void;
    const readyPromise = new Promise<void>((resolve) => (markReady = resolve));
    consumer.on(consumer.events.GROUP_JOIN, (event) => {
      joined = true;
      // Which partitions this process took: after a rebalance (a process or a broker gone, or back)
      // the log shows the partitions moving between the group's members.
      this.logger.info({ groupId, memberId: event.payload.memberId, partitions: event.payload.memberAssignment }, 'joined group: partitions assigned');
    });
    consumer.on(consumer.events.FETCH, () => {
      if (joined && !ready) {
        ready = true;
        markReady();
      }
    });
    consumer.on(consumer.events.CRASH, (event) => {
      this.logger.error({ groupId, error: describeError(event.payload.error), restart: event.payload.restart }, 'consumer crashed');
      if (!event.payload.restart) {
        // kafkajs gives up on this consumer: stop reporting ready and let the process owner act
        // (the services exit, so their supervisor restarts them from the committed offsets).
        ready = false;
        this.onFatal?.(groupId, event.payload.error);
      }
    });
    let stopped = false;
    const stop = async () => {
      if (stopped) return;
      stopped = true;
      // disconnect() lets the in-flight batch finish, then leaves the group.
      await consumer.disconnect();
      await extraClose?.();
    };
    this.closers.push(stop);
    return { groupId, ready: readyPromise, isReady: () => ready, stop };
  }

  async close(): Promise<void> {
    for (const close of this.closers.splice(0).reverse()) {
      await close().catch((error) => this.logger.warn({ error: describeError(error) }, 'kafka close failed'));
    }
    this.sharedProducer = undefined;
  }
}
