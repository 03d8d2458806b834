import type { Producer } from 'kafkajs';
import { GroupCommit } from '@gw/batching';
import type { OutgoingRecord } from './types.ts';

export interface BatchCommit {
  outputs: OutgoingRecord[];
  topic: string;
  partition: number;
  /** The offset the group resumes from: the batch's last offset + 1. */
  nextOffset: string;
}

/**
 * Commits every partition batch that finished while the previous transaction was committing in
 * one Kafka transaction: outputs and input offsets of all of them, atomically (a GroupCommit of
 * batch commits). A transaction costs the broker about the same whatever it carries, so with many
 * partitions this keeps the broker's work per record low.
 */
export function transactionCoalescer(
  producer: Promise<Producer>,
  groupId: string,
  group: (records: OutgoingRecord[]) => Array<{ topic: string; messages: Array<{ key: string; value: Buffer; headers?: Record<string, string> }> }>,
): GroupCommit<BatchCommit> {
  return new GroupCommit<BatchCommit>(async (commits) => {
    const transaction = await (await producer).transaction();
    try {
      for (const { topic, messages } of group(commits.flatMap((c) => c.outputs))) await transaction.send({ topic, messages });
      const byTopic = new Map<string, Array<{ partition: number; offset: string }>>();
      for (const c of commits) byTopic.set(c.topic, [...(byTopic.get(c.topic) ?? []), { partition: c.partition, offset: c.nextOffset }]);
      await transaction.sendOffsets({
        consumerGroupId: groupId,
        topics: [...byTopic.entries()].map(([topic, partitions]) => ({ topic, partitions })),
      });
      await transaction.commit();
    } catch (error) {
      await transaction.abort().catch(() => undefined);
      throw error;
    }
  });
}
