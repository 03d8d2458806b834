import { sql, z, type Queryable, type Transaction } from '@gw/db';
import type { SendDecided } from '@gw/events';
import { initialPolicyState, upgradeState, type CustomerPolicyState } from '@gw/policy';
import { applyPolicyBatch, GENESIS_HASH, PolicyLogRow } from '@gw/policy-log';
import type { BatchResult } from './run-batch.ts';

// next_offset read as text: offsets are bigints in the consumer.
const AppliedOffset = z.object({ next_offset: z.string() });
const ChainHead = z.object({ head_hash: z.string(), last_log_id: z.number() });
const RecordedDecision = PolicyLogRow.pick({ command_id: true, decision_event: true });
const FoldedFact = z.object({ event_id: z.string() });
// jsonb the consumer wrote; upgradeState checks its shape.
const StoredState = z.object({ customer_id: z.string(), state: z.unknown() });

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

/** The stored states of these customers (the initial state for one never seen), in one query. */
export async function loadStates(db: Queryable, customerIds: string[]): Promise<Map<string, CustomerPolicyState>> {
  const states = new Map<string, CustomerPolicyState>();
  if (customerIds.length === 0) return states;
  const rows = await db.any(sql.type(StoredState)`SELECT customer_id, state FROM policy_state WHERE customer_id = ANY(${sql.array(customerIds, 'text')})`);
  const stored = new Map(rows.map((r) => [r.customer_id, r.state]));
  for (const customerId of customerIds) {
    const raw = stored.get(customerId);
    const state = raw === undefined ? initialPolicyState(customerId) : upgradeState(raw);
    // A snapshot too old to upgrade: deciding on a guess would break determinism, so stop here.
    if (!state) throw new Error(`policy state of ${customerId} has an unknown shape; run "gatewayctl projections rebuild"`);
    states.set(customerId, state);
  }
  return states;
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
}

/**
 * Writes a batch's result in one statement (applyPolicyBatch: policy_apply_batch, whose one
 * definition is libs/db/functions/policy_apply_batch.sql): offset, chain head, log entries, folded
 * fact ids, states, quota, suppressions and the instance_guard rows, or nothing if the fence fails.
 */
export async function applyBatch(db: Queryable, write: BatchWrite): Promise<void> {
  const { result } = write;
  await applyPolicyBatch(db, {
    topic: write.topic,
    partition: write.partition,
    expectedOffset: write.expectedOffset,
    nextOffset: write.nextOffset,
    expectedHead: write.expectedHead,
    head: result.head,
    lastLogId: result.lastLogId,
    entries: result.entries,
    states: result.states,
    quota: result.quota,
    suppressions: result.suppressions,
    factIds: result.factIds,
    instanceGuard: result.instanceGuard,
  });
}
