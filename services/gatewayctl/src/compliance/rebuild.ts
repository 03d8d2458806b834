import { sql, z } from '@gw/db';
import type { AnyEvent, SendDecided } from '@gw/events';
import { createPolicy, type CustomerPolicyState } from '@gw/policy';
import { applyPolicyBatch, GENESIS_HASH, insertEntries, instanceGuardRows, ProjectionChanges } from '@gw/policy-log';
import { Count, digestOf, readDeadLetters, Replayer, replayFields, skippedPositions, type ComplianceDeps, type ProgressCallback } from '@gw/compliance';
import type { PartitionRange } from '@gw/kafka';
import { CliError } from '../action.ts';

/** Meant for the operator: printed as is. */
export class RebuildRefused extends CliError {}

export interface RebuildOptions {
  /** Rebuild even when the policy consumer group has active members. */
  force?: boolean;
  onProgress?: ProgressCallback;
  /** One line per finished phase (for a log or a non-terminal stderr). */
  onPhase?: (line: string) => void;
}

export interface RebuildReport {
  rebuilt: true;
  policy_log: number;
  policy_state: number;
  policy_offsets: Array<{ partition: number; next_offset: number }>;
  policy_chain: number;
  suppressions: number;
  quota_usage: number;
  log_id_sequence: number | null;
  customer_events: number;
  decision_records: number;
  /** Records on the decisions topic that repeat a log_id with different content (the first is kept). */
  kafka_conflicts: number;
  /** Decisions whose replay differs from the recorded entry (the recorded entry is kept; the state follows the replay). */
  replay_divergences: number;
  /** Partitions the fold stopped in, at the first command without a recorded decision (left for the consumer). */
  stopped: Array<{ partition: number; offset: number; command_id: string }>;
  elapsed_ms: number;
}

export const REBUILT_TABLES = ['policy_state', 'policy_state_tail', 'policy_offsets', 'policy_chain', 'policy_log', 'suppressions', 'suppression_history', 'quota_usage', 'policy_facts', 'instance_guard'] as const;

const total = (ends: Map<number, PartitionRange>) => [...ends.values()].reduce((n, r) => n + Number(r.end - r.low), 0);

const SequenceValue = z.object({ v: z.number() });

/** What one batch of customer-events changes, gathered as the consumer's runBatch gathers it. */
class RebuiltBatch {
  readonly states = new Map<string, CustomerPolicyState>();
  readonly changes = new ProjectionChanges();
  readonly factIds: string[] = [];

  toWrite() {
    return { states: this.states, quota: this.changes.quota, suppressions: this.changes.suppressions, factIds: this.factIds };
  }
}

/**
 * Rebuilds the policy consumer's projections from Kafka, from zero, in one Postgres transaction:
 * policy_log from the recorded SendDecided records (ids, hashes and event ids kept); states,
 * folded fact ids, offsets and the suppression/quota tables by folding customer-events through
 * engineStep as the consumer does and writing each batch with the consumer's own statement
 * (applyPolicyBatch); policy_chain from the recorded heads, and the log_id sequence set past the
 * highest log_id. Deliveries are not touched.
 *
 * Each partition is folded to its end, or up to its first command that has no recorded decision:
 * that command and everything after it are left to the consumer, exactly as if it had stopped there.
 */
export async function rebuildProjections(deps: ComplianceDeps, options: RebuildOptions = {}): Promise<RebuildReport> {
  const started = Date.now();
  const { pool, kafka, codec, topics } = deps;
  const progress = options.onProgress ?? (() => undefined);
  const phase = options.onPhase ?? (() => undefined);

  const group = topics.group('policy');
  const { members, state } = await kafka.groupMembers(group);
  if (members.length > 0 && !options.force) {
    throw new RebuildRefused(
      `The policy consumer group ${group} has ${members.length} active member(s) (${state}: ${members.map((m) => `${m.clientId}@${m.clientHost}`).join(', ')}). ` +
        'Stop the policy service first, or pass --force.',
    );
  }

  const policy = createPolicy();
  const decisionsTopic = topics.name('policyDecisions');
  const customerTopic = topics.name('customerEvents');
  const decisionEnds = await kafka.endOffsets(decisionsTopic);
  const customerEnds = await kafka.endOffsets(customerTopic);

  return pool.transaction(async (tx) => {
    await tx.query(sql.typeAlias('void')`TRUNCATE ${sql.join(REBUILT_TABLES.map((table) => sql.identifier([table])), sql.fragment`, `)}`);

    // 1. policy_log from the decisions topic.
    const kept = new Map<number, string>(); // log_id → digest of the kept record
    const decided = new Map<string, { replay: string; version: string }>(); // command id → replay fields of its recorded decision, and its policy version
    const heads = new Map<number, { log_id: number; entry_hash: string }>();
    let conflicts = 0;
    let decisionRecords = 0;
    let inserted = 0;
    let maxLogId = 0;
    const decisionsTotal = total(decisionEnds);
    await kafka.readToEnd(decisionsTopic, {
      ends: decisionEnds,
      onBatch: async (records) => {
        const fresh: SendDecided[] = [];
        for (const record of records) {
          decisionRecords++;
          const event = await codec.decode(record).catch(() => null);
          if (!event || event.type !== 'SendDecided') continue;
          const entry = event.payload;
          const digest = digestOf(entry);
          const seen = kept.get(entry.log_id);
          if (seen !== undefined) {
            if (seen !== digest) conflicts++;
            continue;
          }
          if (decided.has(entry.correlation_id)) {
            conflicts++;
            continue;
          }
          kept.set(entry.log_id, digest);
          decided.set(entry.correlation_id, { replay: digestOf(replayFields(entry)), version: entry.policy_version });
          const head = heads.get(entry.partition_chain);
          if (!head || entry.log_id > head.log_id) heads.set(entry.partition_chain, { log_id: entry.log_id, entry_hash: entry.entry_hash });
          if (entry.log_id > maxLogId) maxLogId = entry.log_id;
          fresh.push(entry);
        }
        for (let i = 0; i < fresh.length; i += 500) inserted += await insertEntries(tx, fresh.slice(i, i + 500));
        progress({ phase: 'decisions', done: decisionRecords, total: decisionsTotal });
      },
    });
    phase(`policy_log: ${inserted} entries from ${decisionRecords} decision records (${conflicts} conflicting records ignored)`);

    // 2. Fold customer-events as the consumer does, and write each batch as it does: through
    // applyPolicyBatch (policy_apply_batch), offsets fenced from zero, the chain left to step 3.
    const replayer = new Replayer();
    const next = new Map<number, bigint>();
    const stopped = new Map<number, { offset: bigint; command_id: string }>();
    const written = new Map<number, bigint>();
    const factsSeen = new Set<string>();
    let customerEvents = 0;
    let divergences = 0;
    const customerTotal = total(customerEnds);
    const write = async (partition: number, batch: RebuiltBatch = new RebuiltBatch()) => {
      const expectedOffset = written.get(partition) ?? 0n;
      const nextOffset = next.get(partition) ?? 0n;
      if (nextOffset === expectedOffset) return;
      // instance_guard as the consumer writes it (services/policy run-batch.ts), in the same statement.
      const instanceGuard = instanceGuardRows(batch.changes.touched, (customerId) => batch.states.get(customerId), policy);
      await applyPolicyBatch(tx, { topic: customerTopic, partition, expectedOffset, nextOffset, expectedHead: GENESIS_HASH, head: GENESIS_HASH, lastLogId: null, entries: [], ...batch.toWrite(), instanceGuard });
      written.set(partition, nextOffset);
    };
    // Records the consumer dead-lettered and moved past are skipped here as there.
    const deadLettered = skippedPositions(await readDeadLetters(kafka, codec, topics), 'policy', customerTopic);
    await kafka.readToEnd(customerTopic, {
      ends: customerEnds,
      onBatch: async (records, partition) => {
        const batch = new RebuiltBatch();
        for (const record of records) {
          customerEvents++;
          if (stopped.has(partition)) continue;
          const offset = BigInt(record.offset);
          if (deadLettered.has(`${partition}@${record.offset}`)) {
            next.set(partition, offset + 1n);
            continue;
          }
          let event: AnyEvent | null;
          try {
            event = await codec.decode(record);
          } catch {
            event = null; // skipped, as the consumer skips it
          }
          if (event?.type === 'SendRequested' && !replayer.isDecided(event.payload.correlation_id) && !decided.has(event.payload.correlation_id)) {
            stopped.set(partition, { offset, command_id: event.payload.correlation_id });
            continue;
          }
          next.set(partition, offset + 1n);
          if (!event) continue;
          // The consumer records a fact's id once it is past its first copy, folded or not (run-batch.ts).
          if (event.type === 'PolicyInputRecorded' && !factsSeen.has(event.payload.event_id)) {
            factsSeen.add(event.payload.event_id);
            batch.factIds.push(event.payload.event_id);
          }
          // A command is decided with the policy version its entry recorded (a log spans policy changes).
          const step = replayer.step(event, partition, event.type === 'SendRequested' ? decided.get(event.payload.correlation_id)?.version : undefined);
          if (step.kind === 'error') throw new Error(`the engine failed on ${event.type} ${partition}@${record.offset}: ${step.error}`);
          if (step.kind !== 'folded' && step.kind !== 'decided') continue;
          batch.states.set(step.customerId, replayer.states.get(step.customerId)!);
          for (const folded of step.folded) batch.changes.add(folded);
          if (step.kind === 'decided' && decided.get(step.expected.correlation_id)?.replay !== digestOf(replayFields(step.expected))) divergences++;
        }
        await write(partition, batch);
        progress({ phase: 'customer events', done: customerEvents, total: customerTotal });
      },
    });
    for (const [partition, stop] of stopped) {
      next.set(partition, stop.offset);
      await write(partition);
    }
    phase(`folded ${customerEvents} customer events for ${replayer.states.size} customers (${divergences} replay divergences)`);

    // 3. Chain heads and the log_id sequence.
    const offsets = [...next.entries()].filter(([, offset]) => offset > 0n).sort((a, b) => a[0] - b[0]);
    for (const [partition, head] of heads) {
      await tx.query(sql.typeAlias('void')`INSERT INTO policy_chain (partition, head_hash, last_log_id) VALUES (${partition}, ${head.entry_hash}, ${head.log_id})`);
    }
    let sequence: number | null = null;
    if (maxLogId > 0) {
      // Never backwards: ids handed out by aborted transactions are not reused either.
      sequence = await tx.oneFirst(sql.type(SequenceValue)`
        SELECT setval('policy_log_log_id_seq', GREATEST((SELECT last_value FROM policy_log_log_id_seq), ${maxLogId}::bigint), true) AS v`);
    }
    const count = (table: (typeof REBUILT_TABLES)[number]) => tx.oneFirst(sql.type(Count)`SELECT count(*) AS n FROM ${sql.identifier([table])}`);
    const report: RebuildReport = {
      rebuilt: true,
      policy_log: inserted,
      policy_state: replayer.states.size,
      policy_offsets: offsets.map(([partition, offset]) => ({ partition, next_offset: Number(offset) })),
      policy_chain: heads.size,
      suppressions: await count('suppressions'),
      quota_usage: await count('quota_usage'),
      log_id_sequence: sequence,
      customer_events: customerEvents,
      decision_records: decisionRecords,
      kafka_conflicts: conflicts,
      replay_divergences: divergences,
      stopped: [...stopped.entries()].map(([partition, s]) => ({ partition, offset: Number(s.offset), command_id: s.command_id })),
      elapsed_ms: Date.now() - started,
    };
    phase(`committed in ${(report.elapsed_ms / 1000).toFixed(2)} s`);
    return report;
  });
}
