// A customer's policy state as stored: its last snapshot (policy_state) and the events folded
// since (policy_state_tail), folded again on load with the engine's own evolve. Migration
// 1700000003200 and docs/decisions.md "Policy state snapshots" say why; everything that reads a
// customer's state from Postgres reads it here, so no reader sees a snapshot without its tail.
import { jsonOf, sql, z, type Queryable } from '@gw/db';
import { evolve, upgradeState, type CustomerPolicyState, type PolicyEvent, type PolicyEventType } from '@gw/policy';

export interface StoredPolicyState {
  /** null: a snapshot of a shape this code cannot read (the consumer refuses it; `projections rebuild` mends it). */
  state: CustomerPolicyState | null;
  /** Events in the tail after the snapshot, folded into `state`. */
  tailEvents: number;
}

const StoredRow = z.object({ customer_id: z.string(), state: z.unknown(), tail: z.array(z.array(z.unknown())) });

/**
 * The stored states of these customers, each its snapshot with its tail folded in. A customer
 * with no snapshot is not in the map (the engine has not written one: its initial state). One
 * statement, so the snapshot and the tail are read as of one moment: a batch that writes a
 * snapshot deletes the tail it replaces, and two statements could see the new snapshot with
 * the old tail.
 */
export async function readPolicyStates(db: Queryable, customerIds: readonly string[]): Promise<Map<string, StoredPolicyState>> {
  const found = new Map<string, StoredPolicyState>();
  if (customerIds.length === 0) return found;
  const rows = await db.any(sql.type(StoredRow)`
    SELECT s.customer_id, s.state,
           COALESCE((SELECT json_agg(t.events ORDER BY t.seq) FROM policy_state_tail t WHERE t.customer_id = s.customer_id), '[]'::json) AS tail
      FROM policy_state s WHERE s.customer_id = ANY(${sql.array([...customerIds], 'text')})`);
  for (const row of rows) {
    let state = upgradeState(row.state);
    let tailEvents = 0;
    for (const events of row.tail as PolicyEvent[][]) {
      if (state) for (const event of events) state = evolve(state, event);
      tailEvents += events.length;
    }
    found.set(row.customer_id, { state, tailEvents });
  }
  return found;
}

/** One customer's stored state (readPolicyStates), or null when none is stored or it cannot be read. */
export async function readPolicyState(db: Queryable, customerId: string): Promise<CustomerPolicyState | null> {
  return (await readPolicyStates(db, [customerId])).get(customerId)?.state ?? null;
}

/**
 * The events a batch may append to a tail instead of writing a snapshot: the ones that come with
 * every send. Anything else (a plan, a module switch, a suppression, a pause) writes the snapshot,
 * so a reader of policy_state alone (the PBX route reads the module switch there) sees it at once.
 */
const TAIL_EVENTS: ReadonlySet<PolicyEventType> = new Set<PolicyEventType>(['SendDecided', 'DeliveryOutcomeRecorded', 'ContactLearned']);

/** How a batch stores the states it changed. */
export interface StateWrites {
  /** Written whole to policy_state; their tails are deleted. */
  snapshots: Map<string, CustomerPolicyState>;
  /** Appended to policy_state_tail, one row per customer. */
  tails: Array<{ customerId: string; events: PolicyEvent[] }>;
  /** Events in each changed customer's tail after the write. */
  tailEvents: Map<string, number>;
}

/**
 * Decides, per customer the batch changed, between a snapshot and a tail append. `tailEvents`:
 * what this writer knows of each stored tail (a customer it does not know gets a snapshot);
 * `everyEvents`: at most this many events in a tail (0 or 1: a snapshot every batch).
 */
export function planStateWrites(
  states: ReadonlyMap<string, CustomerPolicyState>,
  folded: ReadonlyMap<string, readonly PolicyEvent[]>,
  tailEvents: ReadonlyMap<string, number>,
  everyEvents: number,
): StateWrites {
  const writes: StateWrites = { snapshots: new Map(), tails: [], tailEvents: new Map() };
  for (const [customerId, state] of states) {
    const events = folded.get(customerId) ?? [];
    const stored = tailEvents.get(customerId);
    const appendable = stored !== undefined && events.length > 0 && stored + events.length < everyEvents && events.every((event) => TAIL_EVENTS.has(event.type));
    if (appendable) {
      writes.tails.push({ customerId, events: [...events] });
      writes.tailEvents.set(customerId, stored + events.length);
    } else {
      writes.snapshots.set(customerId, state);
      writes.tailEvents.set(customerId, 0);
    }
  }
  return writes;
}

/**
 * The part of policy_apply_batch's statement that stores the tails: appends the new rows and
 * deletes the tails of the customers snapshotted. Data-modifying CTEs, so they commit or roll
 * back with the batch's fenced write.
 */
export function tailWrites(tails: StateWrites['tails'], snapshotted: readonly string[]): Array<ReturnType<typeof sql.fragment>> {
  const parts: Array<ReturnType<typeof sql.fragment>> = [];
  if (tails.length > 0) {
    parts.push(sql.fragment`state_tail_rows AS (
      INSERT INTO policy_state_tail (customer_id, events)
      SELECT t.value->>'customerId', t.value->'events' FROM json_array_elements(${jsonOf(tails)}) WITH ORDINALITY AS t(value, n) ORDER BY t.n)`);
  }
  if (snapshotted.length > 0) {
    parts.push(sql.fragment`state_tail_cleared AS (DELETE FROM policy_state_tail WHERE customer_id = ANY(${sql.array([...snapshotted], 'text')}))`);
  }
  return parts;
}
