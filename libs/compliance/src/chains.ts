// The policy log's hash chains in Postgres, checked row by row in chain order: each entry's
// prev_hash is the previous entry's hash, its entry_hash is recomputed from its columns, its stored
// event agrees with them, and the chain head points at the chain's last entry. One check, used by
// verify (every chain from its first entry) and by the policy service's watch (checkChains: each
// chain from the entry it last got to, so every run reads only what was appended since).
import { sql, z, type Queryable } from '@gw/db';
import type { SendDecided } from '@gw/events';
import { entryHash, fromLogRow, GENESIS_HASH, PolicyLogRow } from '@gw/policy-log';
import { comparable, differingFields, sameCopy, type Findings } from './copies.ts';
import { cursor, POLICY_LOG_COLUMNS } from './entries.ts';
import { yielder } from './progress.ts';

/** Where a partition's chain has been checked to: its last entry's log id and entry_hash. */
export interface ChainPosition {
  logId: number;
  hash: string;
}

export const ChainHead = z.object({ partition: z.number(), head_hash: z.string(), last_log_id: z.number() });
export type ChainHead = z.infer<typeof ChainHead>;

export async function chainHeads(tx: Queryable): Promise<Map<number, ChainHead>> {
  return new Map((await tx.any(sql.type(ChainHead)`SELECT partition, head_hash, last_log_id FROM policy_chain`)).map((r) => [r.partition, r]));
}

/**
 * Walks rows ordered by (partition_chain, log_id), reporting what does not hold to `findings`.
 * A chain starts at its position in `from` (checked before), or at the genesis hash.
 */
export class ChainWalk {
  private chain: number | null = null;
  private prev = GENESIS_HASH;
  private last = -1;
  /** Chains walked (those with at least one row). */
  chains = 0;
  /** Each chain's position after the walk: `from`, moved on by the rows walked. */
  readonly reached: Map<number, ChainPosition>;

  constructor(
    private readonly findings: Findings,
    private readonly heads: Map<number, ChainHead>,
    private readonly from: ReadonlyMap<number, ChainPosition> = new Map(),
  ) {
    this.reached = new Map(from);
  }

  /** Checks the next row; returns its entry and the hash recomputed from its columns. */
  next(row: PolicyLogRow): { entry: SendDecided; recomputed: string } {
    if (row.partition_chain !== this.chain) {
      this.close();
      this.chain = row.partition_chain;
      const start = this.from.get(row.partition_chain);
      this.prev = start?.hash ?? GENESIS_HASH;
      this.last = start?.logId ?? -1;
    }
    const entry = fromLogRow(row);
    const { findings } = this;
    if (entry.prev_hash !== this.prev) findings.report(entry.log_id, 'db_chain', `prev_hash ${entry.prev_hash.slice(0, 12)}… is not the previous entry's hash ${this.prev.slice(0, 12)}… in partition ${entry.partition_chain}`, ['prev_hash']);
    const recomputed = entryHash(entry.prev_hash, entry);
    if (recomputed !== entry.entry_hash) findings.report(entry.log_id, 'db_hash', `entry_hash ${entry.entry_hash.slice(0, 12)}… does not match the row's columns (recomputed ${recomputed.slice(0, 12)}…)`, ['entry_hash']);
    if (!sameCopy(entry, row.decision_event)) {
      const fields = differingFields(comparable(entry), comparable(row.decision_event));
      findings.report(entry.log_id, 'db_event', `decision_event disagrees with the columns on ${fields.join(', ')}`, fields);
    }
    this.prev = entry.entry_hash;
    this.last = entry.log_id;
    return { entry, recomputed };
  }

  /** After the last row: closes the chain walked last. */
  end(): void {
    this.close();
    this.chain = null;
  }

  /** The chain just walked must end where policy_chain says its head is. */
  private close(): void {
    const chain = this.chain;
    if (chain === null) return;
    this.chains++;
    this.reached.set(chain, { logId: this.last, hash: this.prev });
    const head = this.heads.get(chain);
    if (!head) this.findings.report(this.last, 'db_chain_head', `policy_chain has no head for partition ${chain}`, ['head_hash']);
    else if (head.head_hash !== this.prev || head.last_log_id !== this.last) {
      this.findings.report(this.last, 'db_chain_head', `policy_chain of partition ${chain} points at log_id ${head.last_log_id} (${head.head_hash.slice(0, 12)}…), the chain ends at ${this.last} (${this.prev.slice(0, 12)}…)`, ['head_hash']);
    }
  }
}

/**
 * Checks the rows appended to each chain after its position in `from` (every row, for a chain not
 * in it), in one read-only snapshot `tx` (see readSnapshot): the rows and the heads agree with each
 * other even while the policy consumer appends. Log ids increase along each chain, so "after" is
 * by log id. Returns each chain's position now, and how many rows were checked.
 */
export async function checkChains(tx: Queryable, from: ReadonlyMap<number, ChainPosition>, findings: Findings): Promise<{ reached: Map<number, ChainPosition>; rows: number }> {
  const walk = new ChainWalk(findings, await chainHeads(tx), from);
  const starts = [...from];
  const query = sql.fragment`
    SELECT ${POLICY_LOG_COLUMNS} FROM policy_log l
      LEFT JOIN unnest(${sql.array(starts.map(([p]) => p), 'int4')}, ${sql.array(starts.map(([, s]) => s.logId), 'int8')}) AS f(chain_partition, after_log_id) ON f.chain_partition = l.partition_chain
     WHERE l.log_id > COALESCE(f.after_log_id, -1)
     ORDER BY l.partition_chain, l.log_id`;
  let rows = 0;
  const breathe = yielder();
  for await (const batch of cursor(tx, PolicyLogRow, query)) {
    for (const row of batch) {
      const turn = breathe();
      if (turn) await turn;
      walk.next(row);
      rows++;
    }
  }
  walk.end();
  return { reached: walk.reached, rows };
}
