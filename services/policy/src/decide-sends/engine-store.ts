import { sql, z, type Queryable, type Transaction } from '@gw/db';
import type { SendDecided } from '@gw/events';
import { initialPolicyState, type CustomerPolicyState } from '@gw/policy';
import { applyPolicyBatch, GENESIS_HASH, planStateWrites, PolicyLogRow, readPolicyStates } from '@gw/policy-log';
import type { BatchResult } from './run-batch.ts';

// next_offset read as text: offsets are bigints in the consumer.
const AppliedOffset = z.object({ next_offset: z.string() });
const ChainHead = z.object({ head_hash: z.string(), last_log_id: z.number() });
const RecordedDecision = PolicyLogRow.pick({ command_id: true, decision_event: true });
const FoldedFact = z.object({ event_id: z.string() });

/** The next offset of a partition whose effect is not yet in the projections (row locked). */
export async function lockAppliedOffset(tx: Transaction, topic: string, partition: number): Promise<bigint> {
  const next = await tx.maybeOneFirst(sql.type(AppliedOffset)`
    SELECT next_offset::text FROM policy_offsets WHERE topic = ${topic} AND partition = ${partition} FOR UPDATE`);
  return next === null ? 0n : BigInt(next);
}

/** The partition's chain head and the last log id on it (row locked). */
export async function lockChainHead(tx: Transaction, partition: number): Promise<{ head: string; lastLogId: number }> {
  const row = await tx.maybeOne(sql.type(ChainHead)`
    SELECT head_hash, last_log_id FROM policy_chain WHERE partition = ${partition} FOR UPDATE`);
  return row ? { head: row.head_hash, lastLogId: row.last_log_id } : { head: GENESIS_HASH, lastLogId: 0 };
}

/** The recorded decisions of the given commands (one query for a whole batch). */
export async function findDecisions(db: Queryable, commandIds: string[]): Promise<Map<string, SendDecided>> {
  if (commandIds.length === 0) return new Map();
  const rows = await db.any(sql.type(RecordedDecision)`
    SELECT command_id, decision_event FROM policy_log WHERE command_id = ANY(${sql.array(commandIds, 'text')})`);
  return new Map(rows.map((r) => [r.command_id, r.decision_event]));
}

/** Which of these fact event ids were folded before (one query for a whole batch). */
export async function findFoldedFacts(db: Queryable, eventIds: string[]): Promise<Set<string>> {
  if (eventIds.length === 0) return new Set();
  const ids = await db.anyFirst(sql.type(FoldedFact)`SELECT event_id FROM policy_facts WHERE event_id = ANY(${sql.array(eventIds, 'text')})`);
  return new Set(ids);
}

/** Customer states as stored, and the events in each one's tail (how many a batch may still append). */
export interface LoadedStates {
  states: Map<string, CustomerPolicyState>;
  /** Only customers with a stored snapshot: one without is given a snapshot by its first batch. */
  tailEvents: Map<string, number>;
}

/** The stored states of these customers (the initial state for one never seen), snapshot and tail, in one round trip. */
export async function loadStates(db: Queryable, customerIds: string[]): Promise<LoadedStates> {
  const loaded: LoadedStates = { states: new Map(), tailEvents: new Map() };
  const stored = await readPolicyStates(db, customerIds);
  for (const customerId of customerIds) {
    const found = stored.get(customerId);
    const state = found === undefined ? initialPolicyState(customerId) : found.state;
    // A snapshot too old to upgrade: deciding on a guess would break determinism, so stop here.
    if (!state) throw new Error(`policy state of ${customerId} has an unknown shape; run "gatewayctl projections rebuild"`);
    loaded.states.set(customerId, state);
    if (found) loaded.tailEvents.set(customerId, found.tailEvents);
  }
  return loaded;
}

/** SQLSTATEs raised by policy_apply_batch: the partition moved on (GWF01), a command was decided (GWC01) or a fact folded (GWC02) before. */
export const FENCE_FAILED = 'GWF01';
export const COMMAND_DECIDED_BEFORE = 'GWC01';
export const FACT_FOLDED_BEFORE = 'GWC02';

/**
 * The SQLSTATE of a failed statement: on node-postgres's error itself (slonik passes codes it does
 * not know, like ours, through as they are), or on its cause where slonik wrapped it in one of its own.
 */
export function sqlStateOf(error: unknown): string | undefined {
  const { code, cause } = (error ?? {}) as { code?: unknown; cause?: { code?: unknown } };
  const found = code ?? cause?.code;
  return typeof found === 'string' ? found : undefined;
}

export interface BatchWrite {
  topic: string;
  partition: number;
  expectedOffset: bigint;
  nextOffset: bigint;
  expectedHead: string;
  result: BatchResult;
  /** What the writer knows of the changed customers' stored tails (LoadedStates.tailEvents). */
  tailEvents: ReadonlyMap<string, number>;
  /** POLICY_SNAPSHOT_EVERY_EVENTS: a tail holds fewer events than this. */
  snapshotEveryEvents: number;
}

/**
 * Writes a batch's result in one statement (applyPolicyBatch: policy_apply_batch, whose one
 * definition is libs/db/functions/policy_apply_batch.sql): offset, chain head, log entries, folded
 * fact ids, states (a snapshot, or the events to append to its tail), quota, suppressions and the
 * instance_guard rows, or nothing if the fence fails. Returns the changed customers' tail lengths.
 */
export async function applyBatch(db: Queryable, write: BatchWrite): Promise<Map<string, number>> {
  const { result } = write;
  const stored = planStateWrites(result.states, result.folded, write.tailEvents, write.snapshotEveryEvents);
  await applyPolicyBatch(db, {
    topic: write.topic,
    partition: write.partition,
    expectedOffset: write.expectedOffset,
    nextOffset: write.nextOffset,
    expectedHead: write.expectedHead,
    head: result.head,
    lastLogId: result.lastLogId,
    entries: result.entries,
    states: stored.snapshots,
    tails: stored.tails,
    quota: result.quota,
    suppressions: result.suppressions,
    factIds: result.factIds,
    instanceGuard: result.instanceGuard,
  });
  return stored.tailEvents;
}
