import type { PoolClient } from '@gw/db';
import { initialPolicyState, upgradeState, type CustomerPolicyState } from '@gw/policy';
import { GENESIS_HASH } from '@gw/policy-log';

/** Customer states read once per batch and written back once, all inside the batch transaction. */
export class StateCache {
  private readonly states = new Map<string, CustomerPolicyState>();
  private readonly dirty = new Set<string>();

  constructor(private readonly client: PoolClient) {}

  async get(customerId: string): Promise<CustomerPolicyState> {
    const cached = this.states.get(customerId);
    if (cached) return cached;
    const result = await this.client.query<{ state: CustomerPolicyState }>('SELECT state FROM policy_state WHERE customer_id = $1', [customerId]);
    const stored = result.rows[0]?.state;
    const state = stored === undefined ? initialPolicyState(customerId) : upgradeState(stored);
    if (!state) {
      // A snapshot too old to upgrade: deciding on a guess would break determinism, so stop here.
      throw new Error(`policy state of ${customerId} has an unknown shape; run "gatewayctl projections rebuild"`);
    }
    this.states.set(customerId, state);
    return state;
  }

  set(customerId: string, state: CustomerPolicyState): void {
    this.states.set(customerId, state);
    this.dirty.add(customerId);
  }

  async flush(): Promise<void> {
    for (const customerId of this.dirty) {
      await this.client.query(
        `INSERT INTO policy_state (customer_id, state, updated_at) VALUES ($1, $2, now())
         ON CONFLICT (customer_id) DO UPDATE SET state = EXCLUDED.state, updated_at = now()`,
        [customerId, JSON.stringify(this.states.get(customerId))],
      );
    }
    this.dirty.clear();
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
