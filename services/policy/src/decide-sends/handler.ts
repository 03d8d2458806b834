import { withTransaction } from '@gw/db';
import type { AnyEvent, SendDecided } from '@gw/events';
import type { OutgoingRecord, TransformBatch } from '@gw/kafka';
import { POLICY_VERSION, type PolicyEvent } from '@gw/policy';
import { engineStep, entryHash, insertEntries, ProjectionBatch, toDecidedEvent, toFactRecord } from '@gw/policy-log';
import type { Runtime } from '@gw/runtime';
import { appliedOffset, chainHead, saveAppliedOffset, saveChainHead, StateCache } from './engine-store.ts';
import { allocateLogIds, findDecisions } from './policy-log-store.ts';

type Output = { type: 'SendDecided'; payload: SendDecided } | { type: 'PolicyEventEmitted'; event: PolicyEvent; correlationId: string };

/**
 * Runs one partition's batch of the customer stream through the policy engine, in one Postgres
 * transaction: decisions become policy-log rows (hash-chained per partition), facts are folded
 * into each customer's state, and the projections follow. The offset applied is stored with them,
 * so a redelivered record never counts twice; a redelivered or repeated command re-emits its
 * recorded decision (same event id, same log_id).
 */
export function decideSends(runtime: Runtime): TransformBatch {
  const { codec, pool, logger, metrics } = runtime;
  const group = runtime.topics.group('policy');
  return async (records, { topic, partition }) => {
    const decoded: Array<{ offset: bigint; event: AnyEvent }> = [];
    for (const record of records) {
      try {
        const event = await codec.decode(record);
        if (event) decoded.push({ offset: BigInt(record.offset), event });
      } catch (error) {
        // A record we cannot decode is skipped, not retried for ever; it stays in the log for inspection.
        metrics.eventsProcessed.inc({ group, topic: record.topic, outcome: 'undecodable' });
        logger.error({ topic: record.topic, partition: record.partition, offset: record.offset, error: String(error) }, 'undecodable record skipped');
      }
    }
    if (records.length === 0) return [];
    const lastOffset = BigInt(records[records.length - 1]!.offset);

    const outputs = await withTransaction(pool, async (client) => {
      const out: Output[] = [];
      const states = new StateCache(client);
      const projections = new ProjectionBatch(client);
      const applied = await appliedOffset(client, topic, partition);
      let head = await chainHead(client, partition);
      let lastLogId = -1;
      // One round trip each for the whole batch: recorded decisions and fresh log ids.
      const commandIds = decoded.flatMap(({ event }) => (event.type === 'SendRequested' ? [event.payload.correlation_id] : []));
      const recorded = await findDecisions(client, commandIds);
      const freshIds = await allocateLogIds(client, new Set(commandIds.filter((id) => !recorded.has(id))).size);
      const entries: SendDecided[] = [];
      await states.preload(decoded.map(({ event }) => event.payload.customer_id));

      for (const { offset, event } of decoded) {
        if (event.type === 'SendRequested') {
          const known = recorded.get(event.payload.correlation_id);
          if (known) {
            metrics.eventsProcessed.inc({ group, topic: 'send-requested', outcome: 'redelivered' });
            // The stored copy keeps no message body; the command still has it.
            const dispatch = known.dispatch ? { ...known.dispatch, text: event.payload.message } : null;
            out.push({ type: 'SendDecided', payload: { ...known, dispatch } });
            continue;
          }
        } else if (offset < applied) {
          continue; // a fact whose effect is already in the projections
        }

        const state = await states.get(event.payload.customer_id);
        const step = engineStep(event, state);
        if (step.kind === 'ignored') continue;
        states.set(event.payload.customer_id, step.state);
        for (const folded of step.folded) await projections.add(folded);

        if (step.kind === 'decided' && event.type === 'SendRequested') {
          const entry = toDecidedEvent(event.payload, step.decision, freshIds.shift()!, POLICY_VERSION);
          entry.partition_chain = partition;
          entry.prev_hash = head;
          entry.entry_hash = entryHash(head, entry);
          head = entry.entry_hash;
          lastLogId = entry.log_id;
          entries.push(entry);
          // A repeat of this command later in the same batch re-emits this decision.
          recorded.set(entry.correlation_id, entry);
          out.push({ type: 'SendDecided', payload: entry });
          metrics.eventsProcessed.inc({ group, topic: 'send-requested', outcome: entry.decision });
          logger.debug({ correlation_id: entry.correlation_id, log_id: entry.log_id, decision: entry.decision, error_code: entry.error_code }, 'send decided');
        }
        for (const emitted of step.emitted) {
          out.push({ type: 'PolicyEventEmitted', event: emitted, correlationId: event.payload.correlation_id });
          logger.warn({ customer_id: emitted.customerId, type: emitted.type }, 'policy engine emitted a fact');
        }
      }

      await insertEntries(client, entries);
      await projections.flush();
      await states.flush();
      if (lastLogId >= 0) await saveChainHead(client, partition, head, lastLogId);
      if (lastOffset + 1n > applied) await saveAppliedOffset(client, topic, partition, lastOffset + 1n);
      return out;
    });

    const encoded: OutgoingRecord[] = [];
    for (const output of outputs) {
      encoded.push(
        output.type === 'SendDecided'
          ? await codec.encode('SendDecided', output.payload)
          : await codec.encode('PolicyEventEmitted', toFactRecord(output.event, output.correlationId)),
      );
    }
    return encoded;
  };
}
