import type { OutgoingRecord } from '@gw/kafka';
import type { InstanceRestricted, Policy } from '@gw/policy';
import { toFactRecord } from '@gw/policy-log';
import type { Runtime, StageEvents, StageHandler } from '@gw/runtime';
import { annotateSpan, ATTR_GATEWAY_ERROR_CODE, ATTR_GATEWAY_MESSAGE_ID, ATTR_GATEWAY_OUTCOME } from '@gw/tracing';
import { applyBatch, COMMAND_DECIDED_BEFORE, FACT_FOLDED_BEFORE, FENCE_FAILED, findDecisions, findFoldedFacts, loadStates, lockAppliedOffset, lockChainHead, sqlStateOf } from './engine-store.ts';
import { LogIdBlock } from './log-ids.ts';
import { RestrictionNotices } from './restriction-notices.ts';
import { PartitionContexts, type PartitionContext } from './partition-contexts.ts';
import { freshCommands, runBatch, type BatchResult } from './run-batch.ts';

/** POLICY_STATES_PER_PARTITION, POLICY_LOG_ID_BLOCK and POLICY_SNAPSHOT_EVERY_EVENTS (config.policy). */
export interface DecideSendsOptions {
  /** Customer states held in memory per partition. */
  statesPerPartition: number;
  /** Policy-log ids taken from the sequence at once. */
  logIdBlock: number;
  /** A customer's stored state is rewritten whole at least every this many events folded; between, a batch appends its events to the state's tail. */
  snapshotEveryEvents: number;
  /** What the engine decides with, made (and its configuration checked) once at start. */
  policy: Policy;
}

/** The records the policy engine folds: commands and facts. */
export const POLICY_INPUTS = ['SendRequested', 'PolicyInputRecorded'] as const;
type Decoded = StageEvents<(typeof POLICY_INPUTS)[number]>;

/**
 * Runs one partition's batch of the customer stream through the policy engine: decisions become
 * policy-log rows (hash-chained per partition), facts are folded into each customer's state, and
 * the projections follow, all written by one statement together with the offset applied, so a
 * redelivered record never counts twice and a redelivered or repeated command re-emits its
 * recorded decision (same event id, same log_id).
 *
 * Two paths, one result. The fast path decides from what this process wrote last for the
 * partition (offset, chain head, customer states) and writes without reading: one round trip.
 * The write is fenced on that offset and head, so if anything else moved the partition, or a
 * command was decided before, nothing is written and the batch is redone on the locking path,
 * which reads everything under row locks inside a transaction, as a process that just started does.
 */
export function decideSends(runtime: Pick<Runtime, 'codec' | 'pool' | 'logger' | 'metrics' | 'topics'>, options: DecideSendsOptions): StageHandler<(typeof POLICY_INPUTS)[number]> {
  const { codec, pool, logger, metrics } = runtime;
  const group = runtime.topics.group('policy');
  const contexts = new PartitionContexts(options.statesPerPartition);
  const logIds = new LogIdBlock(options.logIdBlock);
  const notices = new RestrictionNotices(metrics.registry);

  const fastPath = async (topic: string, partition: number, context: PartitionContext, decoded: Decoded, nextOffset: bigint): Promise<BatchResult> => {
    const missing = [...new Set(decoded.map(({ event }) => event.payload.customer_id))].filter((id) => !context.states.has(id));
    const loaded = await loadStates(pool, missing);
    const noneRecorded = new Map();
    const ids = await logIds.take(pool, freshCommands(decoded, noneRecorded), context.lastLogId);
    const result = runBatch({
      policy: options.policy,
      decoded,
      partition,
      applied: context.applied,
      head: context.head,
      recorded: noneRecorded,
      // Assumed none: a fact folded before fails the write (GWC02) and the batch is redone on the locking path.
      foldedFacts: new Set(),
      logIds: ids,
      stateOf: (id) => context.states.get(id) ?? loaded.states.get(id)!,
    });
    const tailEvents = new Map([...context.tailEvents, ...loaded.tailEvents]);
    const written = await applyBatch(pool, { topic, partition, expectedOffset: context.applied, nextOffset, expectedHead: context.head, result, tailEvents, snapshotEveryEvents: options.snapshotEveryEvents });
    contexts.remember(topic, partition, { applied: nextOffset, head: result.head, lastLogId: result.lastLogId ?? context.lastLogId }, new Map([...loaded.states, ...result.states]), new Map([...loaded.tailEvents, ...written]));
    return result;
  };

  const lockingPath = (topic: string, partition: number, decoded: Decoded, lastOffset: bigint): Promise<BatchResult> =>
    pool.transaction(async (tx) => {
      const applied = await lockAppliedOffset(tx, topic, partition);
      const chain = await lockChainHead(tx, partition);
      const commandIds = decoded.flatMap(({ event }) => (event.type === 'SendRequested' ? [event.payload.correlation_id] : []));
      const recorded = await findDecisions(tx, commandIds);
      const foldedFacts = await findFoldedFacts(tx, decoded.flatMap(({ event }) => (event.type === 'PolicyInputRecorded' ? [event.payload.event_id] : [])));
      const loaded = await loadStates(tx, [...new Set(decoded.map(({ event }) => event.payload.customer_id))]);
      const ids = await logIds.take(tx, freshCommands(decoded, recorded), chain.lastLogId);
      const result = runBatch({ policy: options.policy, decoded, partition, applied, head: chain.head, recorded, foldedFacts, logIds: ids, stateOf: (id) => loaded.states.get(id)! });
      const nextOffset = lastOffset + 1n > applied ? lastOffset + 1n : applied;
      const written = await applyBatch(tx, { topic, partition, expectedOffset: applied, nextOffset, expectedHead: chain.head, result, tailEvents: loaded.tailEvents, snapshotEveryEvents: options.snapshotEveryEvents });
      // Remembered as written; a failed commit throws past this and the context is dropped below.
      contexts.remember(topic, partition, { applied: nextOffset, head: result.head, lastLogId: result.lastLogId ?? chain.lastLogId }, new Map([...loaded.states, ...result.states]), new Map([...loaded.tailEvents, ...written]));
      return result;
    });

  return async (decoded, { topic, partition, nextOffset }) => {
    const lastOffset = nextOffset - 1n;

    let result: BatchResult | undefined;
    const context = contexts.get(topic, partition);
    // A record below the applied offset is a redelivery: the locking path finds what it recorded.
    if (context && decoded.every(({ offset }) => offset >= context.applied)) {
      try {
        result = await fastPath(topic, partition, context, decoded, lastOffset + 1n);
      } catch (error) {
        contexts.drop(topic, partition);
        const code = sqlStateOf(error);
        if (code !== FENCE_FAILED && code !== COMMAND_DECIDED_BEFORE && code !== FACT_FOLDED_BEFORE) throw error;
        const reason = code === FENCE_FAILED ? 'partition moved on' : code === COMMAND_DECIDED_BEFORE ? 'command decided before' : 'fact folded before';
        logger.info({ topic, partition, reason }, 'policy batch redone on the locking path');
      }
    }
    if (!result) {
      try {
        result = await lockingPath(topic, partition, decoded, lastOffset);
      } catch (error) {
        contexts.drop(topic, partition);
        throw error;
      }
    }

    for (const { topic: kind, outcome } of result.outcomes) metrics.eventsProcessed.inc({ group, topic: kind, outcome });
    // Each output continues the trace of the record it answers (its consumer span, see @gw/runtime).
    const traceAt = new Map(decoded.map(({ offset, trace }) => [offset, trace]));
    const encoded: OutgoingRecord[] = [];
    const restricted: Array<{ event: InstanceRestricted; factEventId: string; correlationId: string; offset: bigint }> = [];
    for (const output of result.outputs) {
      const trace = traceAt.get(output.offset);
      if (output.type === 'SendDecided') {
        const entry = output.payload;
        logger.debug({ correlation_id: entry.correlation_id, log_id: entry.log_id, decision: entry.decision, error_code: entry.error_code }, 'send decided');
        annotateSpan(trace, { [ATTR_GATEWAY_MESSAGE_ID]: entry.message_id, [ATTR_GATEWAY_OUTCOME]: entry.decision, ...(entry.error_code ? { [ATTR_GATEWAY_ERROR_CODE]: entry.error_code } : {}) });
        encoded.push(await codec.encode('SendDecided', entry, trace));
      } else {
        // An automatic pause is worth a warning; a suppression carried over to a linked id's number is routine.
        const routine = output.event.type === 'RecipientSuppressed' || output.event.type === 'RecipientUnsuppressed';
        logger[routine ? 'info' : 'warn']({ customer_id: output.event.customerId, type: output.event.type }, 'policy engine emitted a fact');
        const fact = toFactRecord(output.event, output.correlationId);
        encoded.push(await codec.encode('PolicyEventEmitted', fact, trace));
        if (output.event.type === 'InstanceRestricted') restricted.push({ event: output.event, factEventId: fact.event_id, correlationId: output.correlationId, offset: output.offset });
      }
    }
    // A restriction is told to the customer (instance.connection_updated) and counted for the operator.
    const told = await notices.customerEvents(pool, restricted);
    for (const { record, source } of told.records) encoded.push(await codec.encode('GatewayEventEmitted', record, traceAt.get(source.offset)));
    if (told.refused > 0) logger.warn({ refused: told.refused }, 'a restriction not valid as a customer event: the customer is not told by webhook');
    return encoded;
  };
}
