import type { Pool, PoolClient } from '@gw/db';
import type { SendDecided } from '@gw/events';
import { initialPolicyState, upgradeState, type CustomerPolicyState } from '@gw/policy';
import { GENESIS_HASH, toLogRow } from '@gw/policy-log';
import type { BatchResult } from './run-batch.ts';

type Queryable = Pool | PoolClient;

/** The next offset of a partition whose effect is not yet in the projections (row locked). */
export async function lockAppliedOffset(client: PoolClient, topic: string, partition: number): Promise<bigint> {
  const result = await client.query<{ next_offset: string }>(
    'SELECT next_offset::text FROM policy_offsets WHERE topic = $1 AND partition = $2 FOR UPDATE',
    [topic, partition],
  );
  return result.rows[0] ? BigInt(result.rows[0].next_offset) : 0n;
}

/** The partition's chain head and the last log id on it (row locked). */
export async function lockChainHead(client: PoolClient, partition: number): Promise<{ head: string; lastLogId: number }> {
  const result = await client.query<{ head_hash: string; last_log_id: string }>(
    'SELECT head_hash, last_log_id::text FROM policy_chain WHERE partition = $1 FOR UPDATE',
    [partition],
  );
  const row = result.rows[0];
  return row ? { head: row.head_hash, lastLogId: Number(row.last_log_id) } : { head: GENESIS_HASH, lastLogId: 0 };
}

/** The recorded decisions of the given commands (one query for a whole batch). */
export async function findDecisions(db: Queryable, commandIds: string[]): Promise<Map<string, SendDecided>> {
  if (commandIds.length === 0) return new Map();
  const result = await db.query<{ command_id: string; decision_event: SendDecided }>(
    'SELECT command_id, decision_event FROM policy_log WHERE command_id = ANY($1::text[])',
    [commandIds],
  );
  return new Map(result.rows.map((r) => [r.command_id, r.decision_event]));
}

/** Which of these fact event ids were folded before (one query for a whole batch). */
export async function findFoldedFacts(db: Queryable, eventIds: string[]): Promise<Set<string>> {
  if (eventIds.length === 0) return new Set();
  const result = await db.query<{ event_id: string }>('SELECT event_id FROM policy_facts WHERE event_id = ANY($1::text[])', [eventIds]);
  return new Set(result.rows.map((r) => r.event_id));
}

/** The stored states of these customers (the initial state for one never seen), in one query. */
export async function loadStates(db: Queryable, customerIds: string[]): Promise<Map<string, CustomerPolicyState>> {
  const states = new Map<string, CustomerPolicyState>();
  if (customerIds.length === 0) return states;
  const result = await db.query<{ customer_id: string; state: unknown }>('SELECT customer_id, state FROM policy_state WHERE customer_id = ANY($1::text[])', [customerIds]);
  const stored = new Map(result.rows.map((r) => [r.customer_id, r.state]));
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

export interface BatchWrite {
  topic: string;
  partition: number;
  expectedOffset: bigint;
  nextOffset: bigint;
  expectedHead: string;
  result: BatchResult;
}

/**
 * Writes a batch's result in one statement (policy_apply_batch, migration 1700000001000): offset,
 * chain head, log entries, folded fact ids, states, quota and suppressions, or nothing if the fence fails.
 */
export async function applyBatch(db: Queryable, write: BatchWrite): Promise<void> {
  const { result } = write;
  const entries = result.entries.map(toLogRow);
  const stateIds = [...result.states.keys()];
  const quota = [...result.quota.values()];
  await db.query('SELECT policy_apply_batch($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)', [
    write.topic,
    write.partition,
    write.expectedOffset.toString(),
    write.nextOffset.toString(),
    write.expectedHead,
    result.head,
    result.lastLogId,
    JSON.stringify(entries),
    stateIds,
    JSON.stringify(stateIds.map((id) => result.states.get(id))),
    quota.map((q) => q.customerId),
    quota.map((q) => q.windowKey),
    quota.map((q) => q.used),
    JSON.stringify(result.suppressions),
    result.factIds,
  ]);
}
