import type { PoolClient } from '@gw/db';
import { initialPolicyState, upgradeState, type CustomerPolicyState } from '@gw/policy';
import { GENESIS_HASH } from '@gw/policy-log';

/** Customer states read once per batch and written back once, all inside the batch transaction. */
export class StateCache {
  private readonly states = new Map<string, CustomerPolicyState>();
  private readonly dirty = new Set<string>();

  constructor(private readonly client: PoolClient) {}

  /** Loads the states of every customer of the batch in one query. */
  async preload(customerIds: string[]): Promise<void> {
    const missing = [...new Set(customerIds)].filter((id) => !this.states.has(id));
    if (missing.length === 0) return;
    const result = await this.client.query<{ customer_id: string; state: unknown }>(
      'SELECT customer_id, state FROM policy_state WHERE customer_id = ANY($1::text[])',
      [missing],
    );
    const stored = new Map(result.rows.map((r) => [r.customer_id, r.state]));
    for (const customerId of missing) {
      const raw = stored.get(customerId);
      const state = raw === undefined ? initialPolicyState(customerId) : upgradeState(raw);
      if (!state) {
        // A snapshot too old to upgrade: deciding on a guess would break determinism, so stop here.
        throw new Error(`policy state of ${customerId} has an unknown shape; run "gatewayctl projections rebuild"`);
      }
      this.states.set(customerId, state);
    }
  }

  async get(customerId: string): Promise<CustomerPolicyState> {
    await this.preload([customerId]);
    return this.states.get(customerId)!;
  }

  set(customerId: string, state: CustomerPolicyState): void {
    this.states.set(customerId, state);
    this.dirty.add(customerId);
  }

  /** Writes every changed state in one statement. */
  async flush(): Promise<void> {
    if (this.dirty.size === 0) return;
    const ids = [...this.dirty];
    this.dirty.clear();
    await this.client.query(
      `INSERT INTO policy_state (customer_id, state, updated_at)
       SELECT id, state, now() FROM unnest($1::text[], $2::json[]) AS t(id, state)
       ON CONFLICT (customer_id) DO UPDATE SET state = EXCLUDED.state, updated_at = now()`,
      [ids, ids.map((id) => JSON.stringify(this.states.get(id)))],
    );
  }
}

/** The next offset of a partition whose effect is not yet in the projections. */
export async function appliedOffset(client: PoolClient, topic: string, partition: number): Promise<bigint> {
  const result = await client.query<{ next_offset: string }>(
    'SELECT next_offset::text FROM policy_offsets WHERE topic = $1 AND partition = $2 FOR UPDATE',
    [topic, partition],
  );
  return result.rows[0] ? BigInt(result.rows[0].next_offset) : 0n;
}

export async function saveAppliedOffset(client: PoolClient, topic: string, partition: number, next: bigint): Promise<void> {
  await client.query(
    `INSERT INTO policy_offsets (topic, partition, next_offset) VALUES ($1, $2, $3)
     ON CONFLICT (topic, partition) DO UPDATE SET next_offset = EXCLUDED.next_offset`,
    [topic, partition, next.toString()],
  );
}

export async function chainHead(client: PoolClient, partition: number): Promise<string> {
  const result = await client.query<{ head_hash: string }>('SELECT head_hash FROM policy_chain WHERE partition = $1 FOR UPDATE', [partition]);
  return result.rows[0]?.head_hash ?? GENESIS_HASH;
}

export async function saveChainHead(client: PoolClient, partition: number, headHash: string, lastLogId: number): Promise<void> {
  await client.query(
    `INSERT INTO policy_chain (partition, head_hash, last_log_id) VALUES ($1, $2, $3)
     ON CONFLICT (partition) DO UPDATE SET head_hash = EXCLUDED.head_hash, last_log_id = EXCLUDED.last_log_id`,
    [partition, headHash, lastLogId],
  );
}
