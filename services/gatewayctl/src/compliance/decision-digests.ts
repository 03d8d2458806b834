// Phase (2) of verify, the per-record part: every record of the decisions topic decoded and
// reduced to the digests and chain fields the checks compare. It runs where the records are read:
// in a worker thread of verify (replay-worker.ts) or, without one, on the calling thread; either
// way the caller gets the same plain data, batch by batch in each partition's order.
import { EventCodec, type AnyEvent, type SendDecided } from '@gw/events';
import type { KafkaInspector, PartitionRange } from '@gw/kafka';
import { compareDigest, chainedJson, hashOf, recordDigest, replayDigestOf } from './fingerprint.ts';
import { codecDecoder, type RecordDecoder } from './record-decoder.ts';

/** One SendDecided record, as verify compares it. */
export interface DecisionDigest {
  partition: number;
  offset: string;
  log_id: number;
  partition_chain: number;
  prev_hash: string;
  entry_hash: string;
  correlation_id: string;
  customer_id: string;
  /** Digest of its comparable fields (compareDigest). */
  compare: string;
  /** Digest of the whole record (recordDigest). */
  digest: string;
  /** Digest of its replay fields (replayDigestOf). */
  replay: string;
  /** Whether entry_hash is the hash of its chained fields. */
  hash_ok: boolean;
}

/** A record that could not be decoded. */
export interface UndecodableDecision {
  partition: number;
  offset: string;
  error: string;
}

/** What one fetched batch gave: `read` counts every record, of any type. */
export interface DecisionDigestBatch {
  read: number;
  digests: DecisionDigest[];
  undecodable: UndecodableDecision[];
}

export function digestDecision(entry: SendDecided, partition: number, offset: string): DecisionDigest {
  const recomputed = hashOf(entry.prev_hash, chainedJson(entry));
  const compare = compareDigest(entry, recomputed);
  return {
    partition,
    offset,
    log_id: entry.log_id,
    partition_chain: entry.partition_chain,
    prev_hash: entry.prev_hash,
    entry_hash: entry.entry_hash,
    correlation_id: entry.correlation_id,
    customer_id: entry.customer_id,
    compare,
    digest: recordDigest(entry, compare),
    replay: replayDigestOf(entry),
    hash_ok: recomputed === entry.entry_hash,
  };
}

/** Reads the decisions topic to `ends`, handing each batch's digests to `onBatch` (awaited: it holds the reader back). */
export async function digestDecisionsTopic(
  kafka: KafkaInspector,
  decoder: EventCodec | RecordDecoder,
  topic: string,
  ends: Map<number, PartitionRange>,
  onBatch: (batch: DecisionDigestBatch) => Promise<void> | void,
): Promise<void> {
  const decode = decoder instanceof EventCodec ? codecDecoder(decoder) : decoder;
  await kafka.readToEnd(topic, {
    ends,
    concurrency: ends.size,
    onBatch: async (records) => {
      const batch: DecisionDigestBatch = { read: records.length, digests: [], undecodable: [] };
      for (const record of records) {
        let event: AnyEvent | null;
        try {
          const decoded = decode.decode(record);
          event = decoded instanceof Promise ? await decoded : decoded;
        } catch (error) {
          batch.undecodable.push({ partition: record.partition, offset: record.offset, error: (error as Error).message });
          continue;
        }
        if (event?.type === 'SendDecided') batch.digests.push(digestDecision(event.payload, record.partition, record.offset));
      }
      await onBatch(batch);
    },
  });
}
