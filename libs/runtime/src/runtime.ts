import Fastify, { type FastifyInstance } from 'fastify';
import { loadConfig, processSetting, type GatewayConfig } from '@gw/config';
import { createPool, type Pool } from '@gw/db';
import { EventCodec, Topics, type AnyEvent, type EventType, type TopicName } from '@gw/events';
import { KafkaClient, KafkaInspector, type OutgoingRecord, type RunningConsumer, type TransformBatch } from '@gw/kafka';
import { createLogger, createMetrics, describeError, opsPlugin, type Logger, type ServiceMetrics } from '@gw/observability';
import { onManagerLicenseRequired } from '@gw/evolution';
import { startTracing, extractTraceContext, type TraceContext } from '@gw/tracing';
import { deadLetterRecord, isTransient } from './faults.ts';
import { traceEvents } from './stage-spans.ts';

/**
 * The events of one partition's batch a stage takes, decoded, in offset order. `trace`: the
 * context of the event's consumer span (stage-spans.ts), for the records emitted for it and the
 * calls made for it; absent only when a test or bench calls a handler directly.
 */
export type StageEvents<T extends EventType> = Array<{ offset: bigint; event: Extract<AnyEvent, { type: T }>; trace?: TraceContext }>;

export interface StageBatch {
  topic: string;
  partition: number;
  /** The offset after the batch's last record (events of other types included). */
  nextOffset: bigint;
  /** Keeps the group membership alive during long work. */
  heartbeat(): Promise<void>;
}

/** A stage's work on one batch: its events in, the records to append out. */
export type StageHandler<T extends EventType> = (events: StageEvents<T>, batch: StageBatch) => Promise<OutgoingRecord[]>;

export interface StageDefinition<T extends EventType> {
  /** The consumer group's name (without the topic prefix). */
  name: string;
  topic: TopicName;
  /** The event types the stage takes; records of other types are passed over. */
  accepts: readonly T[];
  handle: StageHandler<T>;
  partitionsConsumedConcurrently?: number;
}

/** What every service process shares: configuration, logs, metrics, Kafka, the registry and Postgres. */
export interface Runtime {
  service: string;
  config: GatewayConfig;
  logger: Logger;
  metrics: ServiceMetrics;
  kafka: KafkaClient;
  topics: Topics;
  codec: EventCodec;
  pool: Pool;
  consumers: RunningConsumer[];
  /**
   * Publishes a consumer group's lag (partition end offset minus committed offset) as the
   * gateway_consumer_lag gauge, polled every LAG_POLL_MS: what SREs watch, measured as Kafka sees it.
   */
  watchLag(groupId: string, topics: string[]): void;
  /**
   * Starts a consume-transform-produce stage: group `<prefix><name>`, transactional id
   * `<prefix><name>-tx-<instance>`, its lag watched, stopped with the runtime. Records are
   * decoded here, once for every stage: a record that cannot be decoded fails like any other
   * bad record (tried alone, then dead-lettered), and the handler gets typed events.
   */
  runStage<T extends EventType>(stage: StageDefinition<T>): Promise<RunningConsumer>;
  /** Stops taking records: every consumer finishes its in-flight batch, commits and leaves its group. */
  stopConsumers(): Promise<void>;
  /** stopConsumers, then Kafka and Postgres go. */
  close(): Promise<void>;
}

export interface RuntimeOptions {
  env?: Record<string, string | undefined>;
  /** Tests running several services in one process turn default process metrics off. */
  defaultMetrics?: boolean;
}

export async function createRuntime(service: string, options: RuntimeOptions = {}): Promise<Runtime> {
  const config = loadConfig(options.env);
  const logger = createLogger(service, config.logLevel);
  for (const deprecation of config.deprecations) logger.warn(deprecation);
  // First, so every span of the process is exported; shut down last, in close().
  const tracing = await startTracing(service, config.tracing, (message) => logger.warn(message));
  // The collector's origin only: an endpoint URL may carry credentials or a token in its path.
  if (tracing.enabled && config.tracing.tracesUrl) logger.info({ traces: new URL(config.tracing.tracesUrl).origin }, 'starting: exporting traces over OTLP');
  const metrics = createMetrics(service, options.defaultMetrics ?? true);
  // Every manager call of this process (sends, the dashboard, the resolver) that met an unactivated Evolution 2.4.
  const stopCountingLicenceRefusals = onManagerLicenseRequired((operation) => metrics.managerLicenseRequired.inc({ operation }));
  const kafka = new KafkaClient({
    brokers: config.kafkaBrokers,
    clientId: `${config.kafkaClientId}-${service}`,
    logger,
    sessionTimeoutMs: config.consumerSessionTimeoutMs,
    fetchMaxWaitMs: config.fetchMaxWaitMs,
    fetchMinBytes: config.fetchMinBytes,
    metadataMaxAgeMs: config.metadataMaxAgeMs,
    partitionsConcurrently: config.partitionsConcurrently,
    exactlyOnce: config.exactlyOnce,
    appendQueueLimit: config.appendQueueLimit,
    onFatal: (groupId, error) => {
      logger.fatal({ groupId, error: describeError(error) }, 'consumer stopped for good; exiting so the process is restarted');
      setTimeout(() => process.exit(1), 100).unref();
    },
  });
  const topics = new Topics(config.topicPrefix, config.topicPartitions, config.topicReplication);
  logger.info({ brokers: config.kafkaBrokers }, 'starting: creating missing topics');
  await kafka.ensureTopics(topics.specs());
  logger.info({ registry: config.schemaRegistryUrl }, 'starting: registering event schemas');
  const codec = new EventCodec(config.schemaRegistryUrl, topics);
  await codec.init();
  const pool = await createPool(config.databaseUrl, { maxConnections: 10, ...config.database });
  const consumers: RunningConsumer[] = [];
  const inspector = new KafkaInspector(config.kafkaBrokers, config.topicPrefix);
  const lagTimers: NodeJS.Timeout[] = [];
  const watchLag = (groupId: string, watched: string[]) => {
    const poll = async () => {
      for (const topic of watched) {
        try {
          const [ends, committed] = await Promise.all([inspector.endOffsets(topic), inspector.committedOffsets(groupId, topic)]);
          for (const [partition, range] of ends) {
            const position = committed.get(partition) ?? range.low;
            metrics.consumerLag.set({ group: groupId, topic, partition: String(partition) }, Number(range.end - position));
          }
        } catch (error) {
          logger.debug({ groupId, topic, error: describeError(error) }, 'lag poll failed');
        }
      }
    };
    const timer = setInterval(() => void poll(), config.lagPollMs);
    timer.unref();
    lagTimers.push(timer);
    void poll();
  };
  const runStage: Runtime['runStage'] = async ({ name, topic, accepts, handle, partitionsConsumedConcurrently }) => {
    const groupId = topics.group(name);
    const wanted = new Set<string>(accepts);
    type Events = Parameters<typeof handle>[0];
    const transform: TransformBatch = async (records, ctx) => {
      const decoded: Array<{ record: (typeof records)[number]; event: Events[number]['event'] }> = [];
      for (const record of records) {
        // Throws for a record that cannot be decoded: the stage runner tries it alone, then dead-letters it.
        const event = await codec.decode(record);
        if (event && wanted.has(event.type)) decoded.push({ record, event: event as Events[number]['event'] });
      }
      if (decoded.length === 0) return [];
      // Spans start once the whole batch is decoded, so a batch that fails to decode leaves none open.
      const traced = traceEvents(groupId, decoded);
      try {
        const outputs = await handle(traced.events, { ...ctx, nextOffset: BigInt(records[records.length - 1]!.offset) + 1n });
        traced.end();
        return outputs;
      } catch (error) {
        traced.end(error);
        throw error;
      }
    };
    const consumer = await kafka.transform({
      groupId,
      topics: [topics.name(topic)],
      instanceId: config.consumerInstanceId,
      transactionalIdPrefix: topics.group(`${name}-tx`),
      transform,
      faults: {
        isTransient,
        maxTries: config.stageRecordTries,
        // The dead letter stays in the trace of the record it stands for.
        deadLetter: async (record, failure) => (await deadLetterRecord(codec, name, record, failure)).map((letter) => ({ ...letter, trace: extractTraceContext(record.headers) })),
        onFailure: (record, error, transient) => {
          metrics.stageFailures.inc({ group: groupId, kind: transient ? 'transient' : 'record' });
          const where = record ? { topic: record.topic, partition: record.partition, offset: record.offset } : {};
          logger.warn({ group: groupId, ...where, transient, error: describeError(error) }, transient ? 'stage waiting for the infrastructure' : 'record failed in stage');
        },
        onDeadLettered: (record, failure) => {
          metrics.deadLetters.inc({ group: groupId, topic: record.topic });
          logger.error({ group: groupId, topic: record.topic, partition: record.partition, offset: record.offset, tries: failure.tries, error: describeError(failure.error) }, 'record dead-lettered; the stage moved past it (gatewayctl dlq list)');
        },
      },
      partitionsConsumedConcurrently,
    });
    consumers.push(consumer);
    watchLag(consumer.groupId, [topics.name(topic)]);
    return consumer;
  };
  let closed = false;
  const stopConsumers = async () => {
    for (const timer of lagTimers) clearInterval(timer);
    await Promise.allSettled(consumers.map((c) => c.stop()));
  };
  return {
    service,
    config,
    logger,
    metrics,
    kafka,
    topics,
    codec,
    pool,
    consumers,
    watchLag,
    runStage,
    stopConsumers,
    async close() {
      if (closed) return;
      closed = true;
      stopCountingLicenceRefusals();
      // Consumers first: they finish their in-flight batch and commit before anything else goes away.
      await stopConsumers();
      await kafka.close();
      await pool.end().catch(() => undefined);
      // Last: the spans of everything above are exported before the process goes.
      await tracing.shutdown().catch((error) => logger.warn({ error: describeError(error) }, 'tracing: final export failed'));
    },
  };
}

/** The small HTTP server of a consumer service: /healthz, /readyz (consumers joined) and /metrics. */
export async function startOpsServer(runtime: Runtime, host: string, port: number): Promise<FastifyInstance> {
  const app = Fastify({ logger: false });
  await app.register(opsPlugin, {
    metrics: runtime.metrics,
    readiness: { check: () => runtime.consumers.filter((c) => !c.isReady()).map((c) => `consumer ${c.groupId}`) },
  });
  await app.listen({ host, port });
  return app;
}

/** SIGTERM/SIGINT: stop taking work, finish in-flight work, commit, then exit. */
export function onShutdown(logger: Logger, stop: () => Promise<void>): void {
  let stopping = false;
  const handler = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    const force = setTimeout(() => {
      logger.error('shutdown took too long; exiting');
      process.exit(1);
    }, 30_000);
    force.unref();
    stop()
      .then(() => process.exit(0))
      .catch((error) => {
        logger.error({ error: describeError(error) }, 'shutdown failed');
        process.exit(1);
      });
  };
  process.on('SIGTERM', () => handler('SIGTERM'));
  process.on('SIGINT', () => handler('SIGINT'));
  watchParent(handler);
}

/**
 * A service started by a test or bench harness is given the harness's pid (STOP_WITH_PARENT_PID).
 * Should the harness die without stopping it (killed, crashed), the service is handed to another
 * parent: it then shuts down as on SIGTERM, so an interrupted run leaves nothing running.
 */
function watchParent(stop: (reason: string) => void): void {
  const parent = processSetting('STOP_WITH_PARENT_PID');
  if (parent === null) return;
  const check = () => {
    if (process.ppid !== parent) stop('parent exited');
  };
  check();
  setInterval(check, 1_000).unref();
}

const STARTUP_TIMEOUT_MS = 60_000;

/**
 * The whole life of a consumer service process: the runtime, the service's stages, the ops
 * server on host:port, and a graceful shutdown that also runs the service's own cleanup.
 */
export async function runService(
  service: string,
  address: (config: Runtime['config']) => { host: string; port: number },
  start: (runtime: Runtime) => Promise<void | (() => void | Promise<void>)>,
): Promise<void> {
  // A start that hangs (a broker or registry that accepts connections but never answers) ends
  // the process with a reason, instead of leaving a silent process that never turns ready.
  const startDeadline = setTimeout(() => {
    process.stderr.write(`${service}: not started within ${STARTUP_TIMEOUT_MS} ms (Kafka, the schema registry or Postgres did not answer); exiting\n`);
    process.exit(1);
  }, STARTUP_TIMEOUT_MS);
  startDeadline.unref();
  const runtime = await createRuntime(service);
  const cleanup = await start(runtime);
  const { host, port } = address(runtime.config);
  const ops = await startOpsServer(runtime, host, port);
  clearTimeout(startDeadline);
  runtime.logger.info({ port }, `${service} service started`);
  // Consumers stop first (their in-flight batches may still use what the service set up, e.g. the
  // delivery breakers), then the service's own cleanup finishes its work while Kafka and Postgres
  // are still there (the webhook worker records its in-flight attempts), then they go.
  onShutdown(runtime.logger, async () => {
    await ops.close();
    await runtime.stopConsumers();
    await cleanup?.();
    await runtime.close();
  });
}
