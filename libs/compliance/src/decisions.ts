// verify's pass (2): the decisions topic read whole, each record's hash checked and its digests kept.
import type { EventCodec, SendDecided } from '@gw/events';
import type { KafkaInspector, PartitionRange } from '@gw/kafka';
import { GENESIS_HASH } from '@gw/policy-log';
import { digests, Findings } from './copies.ts';
import { yielder } from './progress.ts';
import { digestOf, replayFields } from './replay.ts';

/** A record of the decisions topic, as digests. */
export interface Recorded {
  compare: string;
  replay: string;
  partition_chain: number;
  prev_hash: string;
  entry_hash: string;
  command_id: string;
  customer_id: string;
  position: string;
}

export interface DecisionsScope {
  topic: string;
  ends: Map<number, PartitionRange>;
  /** The partition chains checked (null: all). */
  chains: number[] | null;
  /** Divergences kept (all are counted by the caller as they come back). */
  maxDivergences: number;
}

export type DecisionsOutcome = Awaited<ReturnType<typeof readDecisions>>;

/**
 * (2) Every SendDecided on the decisions topic up to `ends`: hashes checked, the first record per
 * log id kept as digests, and each partition's records chained.
 */
export async function readDecisions(kafka: KafkaInspector, codec: EventCodec, scope: DecisionsScope, progress: (n: number) => void = () => undefined) {
  const findings = new Findings(scope.maxDivergences);
  const inScope = (chain: number) => scope.chains === null || scope.chains.includes(chain);
  const byLogId = new Map<number, Recorded>();
  const byCommand = new Map<string, number>();
  // A second record for a log id with other content: described once the pass is over (both read again).
  const conflicts: Array<{ logId: number; first: string; position: string }> = [];
  let read = 0;
  let duplicates = 0;
  const breathe = yielder();
  await kafka.readToEnd(scope.topic, {
    ends: scope.ends,
    onBatch: async (records) => {
      for (const record of records) {
        read++;
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
        const { recomputed, compare } = digests(entry);
        const first = byLogId.get(entry.log_id);
        if (first) {
          if (first.compare === compare) duplicates++;
          else conflicts.push({ logId: entry.log_id, first: first.position, position });
          continue;
        }
        if (recomputed !== entry.entry_hash) findings.report(entry.log_id, 'kafka_hash', `record ${position}: entry_hash does not match its content`, ['entry_hash']);
        const twice = byCommand.get(entry.correlation_id);
        if (twice !== undefined) findings.report(entry.log_id, 'kafka_conflict', `command ${entry.correlation_id} was decided twice: log_id ${twice} and ${entry.log_id}`, ['command_id']);
        else byCommand.set(entry.correlation_id, entry.log_id);
        byLogId.set(entry.log_id, {
          compare,
          replay: digestOf(replayFields(entry)),
          partition_chain: entry.partition_chain,
          prev_hash: entry.prev_hash,
          entry_hash: entry.entry_hash,
          command_id: entry.correlation_id,
          customer_id: entry.customer_id,
          position,
        });
      }
      progress(read);
    },
  });
  // Each partition's records, in log order, must chain.
  const chains = new Map<number, Array<[number, Recorded]>>();
  for (const item of byLogId) {
    const list = chains.get(item[1].partition_chain);
    if (list) list.push(item);
    else chains.set(item[1].partition_chain, [item]);
  }
  for (const [partition, list] of chains) {
    let prev = GENESIS_HASH;
    for (const [logId, entry] of list.sort((a, b) => a[0] - b[0])) {
      if (entry.prev_hash !== prev) findings.report(logId, 'kafka_chain', `prev_hash ${entry.prev_hash.slice(0, 12)}… is not the previous record's hash ${prev.slice(0, 12)}… in partition ${partition}`, ['prev_hash']);
      prev = entry.entry_hash;
    }
  }
  return { byLogId, read, duplicates, conflicts, divergences: findings.kept, divergenceCount: findings.count };
}
