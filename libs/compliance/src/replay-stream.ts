// verify's pass (3): customer-events replayed through the decider, each partition beside its
// chain of recorded entries. The policy consumer decides a partition's commands in order and
// appends each first decision to that partition's chain, so the chain's rows, read in log order
// (chain-rows.ts), meet the partition's commands one by one: each command is decided with the
// policy version its entry recorded, and the replayed entry must hash as the recorded one. A
// command that is not the chain's next entry is looked up by its id: decided before (a repeat),
// further on (the entries skipped have no command), or never. Memory: the customers' states and
// one page of rows per partition, whatever the size of the log.
import type { Queryable } from '@gw/db';
import { sql, z } from '@gw/db';
import type { AnyEvent, EventCodec, SendDecided } from '@gw/events';
import type { KafkaInspector, PartitionRange } from '@gw/kafka';
import { entryHash } from '@gw/policy-log';
import { ChainRows, rowTypeOf } from './chain-rows.ts';
import { yielder } from './progress.ts';
import { Replayer } from './replay.ts';

/** What to replay, as plain data (it crosses to a worker thread). */
export interface ReplayScope {
  topic: string;
  /** Per partition: [partition, low, end] (decimal strings). */
  ends: Array<[number, string, string]>;
  /** Per partition: the policy consumer's committed offset, or null when it never committed. */
  committed: Array<[number, string | null]>;
  /** Replay these customers only; null: everyone. */
  customers: string[] | null;
  /** Positions (partition@offset) the policy consumer dead-lettered and moved past: skipped as it skipped them. */
  skip: string[];
  /** Per chain, its last log id in verify's snapshot: entries up to it must have met their command. */
  heads: Array<[number, number]>;
  /** Commands whose replayed entries are wanted back whole (to describe a divergence). */
  keep?: string[];
}

export interface ReplayOutcome {
  read: number;
  customerEvents: number;
  undecodable: number;
  deadLettered: number;
  duplicateCommands: number;
  decided: number;
  /** Commands past the consumer's committed offset: not decided yet, not checked. */
  pending: string[];
  errors: Array<{ logId: number | null; eventType: string; customerId: string; position: string; error: string }>;
  /** Decisions whose replay differs from the recorded entry. */
  mismatches: Array<{ commandId: string; customerId: string; logId: number }>;
  /** Commands consumed (below the committed offset) with no recorded entry. */
  missing: Array<{ commandId: string; customerId: string; position: string }>;
  /** Recorded entries no replayed command met. */
  orphans: Array<{ logId: number; commandId: string }>;
  kept: SendDecided[];
}

/** What the replay needs of a recorded entry: which command, which policy, and what to match. */
const RecordedRow = z.object({
  log_id: z.number(),
  command_id: z.string(),
  event_id: z.string(),
  customer_id: z.string(),
  policy_version: z.string(),
  partition_chain: z.number(),
  prev_hash: z.string(),
  entry_hash: z.string(),
  error_message: z.string().nullable(),
});
type RecordedRow = z.infer<typeof RecordedRow>;
const RECORDED_ROW = rowTypeOf(RecordedRow);

export const toScopeEnds = (ranges: Map<number, PartitionRange>): ReplayScope['ends'] => [...ranges.values()].map((r) => [r.partition, String(r.low), String(r.end)]);

/**
 * Reads customer-events to the scope's ends and replays the customers in scope against the
 * recorded entries read from `db` as they are now (a command below the committed offset has its
 * entry committed; an entry newer than verify's snapshot is reached only by its command).
 */
export async function replayCustomerEvents(kafka: KafkaInspector, codec: EventCodec, db: Queryable, scope: ReplayScope, progress: (read: number) => void = () => undefined): Promise<ReplayOutcome> {
  const outcome: ReplayOutcome = { read: 0, customerEvents: 0, undecodable: 0, deadLettered: 0, duplicateCommands: 0, decided: 0, pending: [], errors: [], mismatches: [], missing: [], orphans: [], kept: [] };
  const replayer = new Replayer(undefined, undefined, false);
  const committed = new Map(scope.committed.map(([partition, offset]) => [partition, offset]));
  const ends = new Map(scope.ends.map(([partition, low, end]) => [partition, { partition, low: BigInt(low), end: BigInt(end) }]));
  // Past the committed offset (or the end, when the consumer never committed) commands are pending.
  const limit = (partition: number) => BigInt(committed.get(partition) ?? ends.get(partition)!.end);
  const customers = scope.customers === null ? null : new Set(scope.customers);
  const skip = new Set(scope.skip);
  const keep = new Set(scope.keep ?? []);
  const chains = new Map<number, ChainRows<typeof RecordedRow>>();
  const chainOf = (partition: number) => {
    let rows = chains.get(partition);
    if (!rows) chains.set(partition, (rows = new ChainRows(db, RECORDED_ROW, partition, { customers: scope.customers })));
    return rows;
  };
  const breathe = yielder();

  /** The recorded entry of a command at partition@offset, or null (a repeat, or none). */
  const recordedFor = async (commandId: string, partition: number): Promise<RecordedRow | 'repeat' | null> => {
    const rows = chainOf(partition);
    const next = await rows.peek();
    if (next?.command_id === commandId) return rows.take();
    const found = await db.maybeOne(sql.type(RecordedRow)`SELECT ${sql.join(Object.keys(RecordedRow.shape).map((c) => sql.identifier([c])), sql.fragment`, `)} FROM policy_log WHERE command_id = ${commandId}`);
    if (!found) return null;
    if (found.partition_chain !== partition) return found;
    if (found.log_id <= rows.lastTaken) return 'repeat';
    // Further on in the chain: the entries before it met no command.
    for (let row = await rows.peek(); row && row.log_id < found.log_id; row = await rows.peek()) outcome.orphans.push({ logId: rows.take().log_id, commandId: row.command_id });
    if ((await rows.peek())?.log_id === found.log_id) rows.take();
    return found;
  };

  await kafka.readToEnd(scope.topic, {
    ends,
    onBatch: async (records, partition) => {
      for (const record of records) {
        outcome.read++;
        const turn = breathe();
        if (turn) await turn;
        const position = `${partition}@${record.offset}`;
        if (skip.has(position)) {
          outcome.deadLettered++;
          continue;
        }
        let event: AnyEvent | null;
        try {
          event = await codec.decode(record);
        } catch {
          outcome.undecodable++;
          continue;
        }
        if (!event || (customers && !customers.has(event.payload.customer_id))) continue;
        outcome.customerEvents++;
        if (BigInt(record.offset) >= limit(partition)) {
          if (event.type === 'SendRequested') outcome.pending.push(event.payload.correlation_id);
          continue;
        }
        let recorded: RecordedRow | null = null;
        if (event.type === 'SendRequested') {
          const found = await recordedFor(event.payload.correlation_id, partition);
          if (found === 'repeat') {
            // The consumer re-emits the recorded decision and folds nothing.
            outcome.duplicateCommands++;
            continue;
          }
          recorded = found;
          if (!found) outcome.missing.push({ commandId: event.payload.correlation_id, customerId: event.payload.customer_id, position });
        }
        const step = replayer.step(event, partition, recorded?.policy_version);
        if (step.kind === 'error') outcome.errors.push({ logId: recorded?.log_id ?? null, eventType: event.type, customerId: step.customerId, position, error: step.error });
        else if (step.kind === 'decided') {
          outcome.decided++;
          const entry = step.expected;
          if (keep.has(entry.correlation_id)) outcome.kept.push(entry);
          if (recorded && !sameEntry(entry, recorded)) outcome.mismatches.push({ commandId: entry.correlation_id, customerId: step.customerId, logId: recorded.log_id });
        }
      }
      progress(outcome.read);
    },
  });

  // Entries of the snapshot no command met: in flight when their command is pending, else orphans.
  const pending = new Set(outcome.pending);
  for (const [chain, head] of scope.heads) {
    const rows = chainOf(chain);
    for (let row = await rows.peek(); row && row.log_id <= head; row = await rows.peek()) {
      rows.take();
      if (!pending.has(row.command_id)) outcome.orphans.push({ logId: row.log_id, commandId: row.command_id });
    }
  }
  return outcome;
}

/**
 * The replayed entry is the recorded one when, given what the log assigns (ids, the previous
 * hash), it hashes to the recorded entry_hash and carries the same error text: one hash per
 * command, and the recorded hash is the one the chain checks hold to.
 */
function sameEntry(replayed: SendDecided, recorded: RecordedRow): boolean {
  const assigned = { ...replayed, log_id: recorded.log_id, event_id: recorded.event_id };
  return entryHash(recorded.prev_hash, assigned) === recorded.entry_hash && (replayed.error_message ?? null) === recorded.error_message;
}
