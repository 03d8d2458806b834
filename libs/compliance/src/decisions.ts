// verify's passes (1) and (2) together: the decisions topic read in order, and beside each
// record the Postgres row of its log id, read from the snapshot chain by chain in keyset pages
// (chain-rows.ts). The policy consumer appends a chain's records in log order, so record and row
// meet as they stream: both copies compared, each chain walked (chains.ts) and the records'
// own chain checked as they come, then dropped. What does not meet in order (a repeated or forged
// record behind its chain, a record newer than the snapshot, a row with no record yet) is kept
// aside, by log id, and settled at the end: memory is one page per chain plus the exceptions.
import { sql, type Queryable } from '@gw/db';
import type { EventCodec, SendDecided } from '@gw/events';
import type { KafkaInspector, PartitionRange } from '@gw/kafka';
import { fromLogRow, GENESIS_HASH, PolicyLogRow } from '@gw/policy-log';
import { ChainRows } from './chain-rows.ts';
import { ChainWalk, type ChainHead } from './chains.ts';
import { compareDigest, digests, identicalCopies, type Findings } from './copies.ts';
import { CheckedPolicyLogRow, POLICY_LOG_COLUMNS } from './entries.ts';
import { yielder } from './progress.ts';

export interface CopiesScope {
  topic: string;
  ends: Map<number, PartitionRange>;
  /** The partition chains checked (null: all). */
  chains: number[] | null;
  /** Every chain that may hold rows (heads, partitions): walked to its end even without records. */
  known: number[];
  heads: Map<number, ChainHead>;
  /** With a customer: whose entries are counted and collected. */
  customerId: string | null;
}

/** A record that did not meet its row in order: compared once the stream is over. */
export interface LooseRecord {
  logId: number;
  position: string;
  compare: string;
  customerId: string;
}

/** A row no record met (yet): a record may still come for it, out of order. */
interface LooseRow {
  compare: string;
  commandId: string;
  customerId: string;
}

class ChainCopies {
  readonly walk: ChainWalk;
  /** The last record taken in order, for the records' own chain. */
  lastRecordLogId = -1;
  lastRecordHash = GENESIS_HASH;

  constructor(
    readonly rows: ChainRows<typeof CheckedPolicyLogRow.parser>,
    findings: Findings,
    heads: Map<number, ChainHead>,
  ) {
    this.walk = new ChainWalk(findings, heads);
  }
}

export type CopiesOutcome = Awaited<ReturnType<typeof checkCopies>>;

/** Reads the decisions topic to `ends` against the snapshot's rows (see the file comment). */
export async function checkCopies(kafka: KafkaInspector, codec: EventCodec, tx: Queryable, scope: CopiesScope, findings: Findings, progress: (n: number) => void = () => undefined) {
  const inScope = (chain: number) => scope.chains === null || scope.chains.includes(chain);
  const chains = new Map<number, ChainCopies>();
  const chainOf = (chain: number) => {
    let copies = chains.get(chain);
    if (!copies) chains.set(chain, (copies = new ChainCopies(new ChainRows(tx, CheckedPolicyLogRow, chain, { prefetch: true }), findings, scope.heads)));
    return copies;
  };
  const counts = { rows: 0, customerRows: 0, read: 0, firsts: 0 };
  const policyVersions = new Set<string>();
  const customerLogIds = new Set<number>();
  const looseRows = new Map<number, LooseRow>();
  /** Records behind their chain (a repeat, or another copy) and records with no row in the snapshot. */
  const behind: LooseRecord[] = [];
  const ahead: LooseRecord[] = [];

  /** Walks the next row of a chain (it exists: peeked). */
  const walkRow = (copies: ChainCopies) => {
    const row = copies.rows.take();
    const walked = copies.walk.next(row);
    counts.rows++;
    if (scope.customerId !== null && walked.entry.customer_id === scope.customerId) {
      counts.customerRows++;
      policyVersions.add(walked.entry.policy_version);
      customerLogIds.add(walked.entry.log_id);
    }
    return walked;
  };
  /** Walks the next row of a chain and keeps it aside: no record met it (yet). */
  const walkLooseRow = (copies: ChainCopies) => {
    const { entry, recomputed } = walkRow(copies);
    looseRows.set(entry.log_id, { compare: compareDigest(entry, recomputed), commandId: entry.correlation_id, customerId: entry.customer_id });
  };
  const kafkaHash = (entry: SendDecided, recomputed: string, position: string) => {
    if (recomputed !== entry.entry_hash) findings.report(entry.log_id, 'kafka_hash', `record ${position}: entry_hash does not match its content`, ['entry_hash']);
  };
  const looseRecord = (entry: SendDecided, position: string, compare: string): LooseRecord => ({ logId: entry.log_id, position, compare, customerId: entry.customer_id });

  const onRecord = async (entry: SendDecided, position: string) => {
    const copies = chainOf(entry.partition_chain);
    if (entry.log_id <= copies.lastRecordLogId) {
      // Behind the chain's records: the first record of a row left loose, else another copy.
      const { recomputed, compare } = digests(entry);
      const row = looseRows.get(entry.log_id);
      if (!row) return void behind.push(looseRecord(entry, position, compare));
      looseRows.delete(entry.log_id);
      counts.firsts++;
      kafkaHash(entry, recomputed, position);
      if (row.compare !== compare) ahead.push(looseRecord(entry, position, compare));
      return;
    }
    counts.firsts++;
    if (entry.prev_hash !== copies.lastRecordHash) {
      findings.report(entry.log_id, 'kafka_chain', `prev_hash ${entry.prev_hash.slice(0, 12)}… is not the previous record's hash ${copies.lastRecordHash.slice(0, 12)}… in partition ${entry.partition_chain}`, ['prev_hash']);
    }
    copies.lastRecordLogId = entry.log_id;
    copies.lastRecordHash = entry.entry_hash;
    // Rows before it have no record so far.
    for (let row = await copies.rows.peek(); row && row.log_id < entry.log_id; row = await copies.rows.peek()) walkLooseRow(copies);
    if ((await copies.rows.peek())?.log_id === entry.log_id) {
      const walked = walkRow(copies);
      // The usual case: the record is its row to the letter, so the hash the walk recomputed from
      // the row's columns is also the record's (identicalCopies): one hash for both copies, and no
      // comparison digests. A record that differs in anything is hashed on its own and set aside
      // to be described (kafka_vs_db).
      if (identicalCopies(entry, walked.entry)) return kafkaHash(entry, walked.recomputed, position);
      const { recomputed, compare } = digests(entry);
      kafkaHash(entry, recomputed, position);
      if (compareDigest(walked.entry, walked.recomputed) !== compare) ahead.push(looseRecord(entry, position, compare));
    } else {
      // No row in the snapshot: looked up again once the stream is over.
      const { recomputed, compare } = digests(entry);
      kafkaHash(entry, recomputed, position);
      ahead.push(looseRecord(entry, position, compare));
    }
  };

  const breathe = yielder();
  await kafka.readToEnd(scope.topic, {
    ends: scope.ends,
    onBatch: async (records) => {
      for (const record of records) {
        counts.read++;
        const turn = breathe();
        if (turn) await turn;
        const position = `${record.partition}@${record.offset}`;
        let entry: SendDecided;
        try {
          const event = await codec.decode(record);
          if (event?.type !== 'SendDecided') continue;
          entry = event.payload;
        } catch (error) {
          findings.report(null, 'undecodable', `decisions record ${position}: ${(error as Error).message}`);
          continue;
        }
        if (!inScope(entry.partition_chain)) continue;
        await onRecord(entry, position);
      }
      progress(counts.read + counts.rows);
    },
  });

  // Every chain walked to its end: rows past the last record have no record (yet).
  for (const chain of new Set([...scope.known.filter(inScope), ...chains.keys()])) {
    const copies = chainOf(chain);
    for (let row = await copies.rows.peek(); row; row = await copies.rows.peek()) walkLooseRow(copies);
    copies.walk.end();
  }
  progress(counts.read + counts.rows);
  const walked = [...chains.values()].reduce((n, c) => n + c.walk.chains, 0);
  if (scope.chains === null) {
    for (const [partition, head] of scope.heads) {
      if ((chains.get(partition)?.walk.chains ?? 0) === 0) findings.report(head.last_log_id, 'db_chain_head', `policy_chain of partition ${partition} points at log_id ${head.last_log_id}, which is not in policy_log`, ['head_hash']);
    }
  }
  return { counts, chains: walked, policyVersions, customerLogIds, looseRows, behind, ahead };
}

/** Compare digests of rows by log id, as they are now (after the snapshot). */
export async function rowDigests(db: Queryable, logIds: number[]): Promise<Map<number, { compare: string; entry: SendDecided }>> {
  const found = new Map<number, { compare: string; entry: SendDecided }>();
  for (let i = 0; i < logIds.length; i += 1000) {
    const rows = await db.any(sql.type(PolicyLogRow)`SELECT ${POLICY_LOG_COLUMNS} FROM policy_log WHERE log_id = ANY(${sql.array(logIds.slice(i, i + 1000), 'int8')})`);
    for (const row of rows) {
      const entry = fromLogRow(row);
      found.set(row.log_id, { compare: digests(entry).compare, entry });
    }
  }
  return found;
}
