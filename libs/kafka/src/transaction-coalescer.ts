import type { Producer } from 'kafkajs';
import type { OutgoingRecord } from './types.ts';

export interface BatchCommit {
  outputs: OutgoingRecord[];
  topic: string;
  partition: number;
  /** The offset the group resumes from: the batch's last offset + 1. */
  nextOffset: string;
}

/**
 * One Kafka transaction for every partition batch that finished while the previous transaction
 * was committing: outputs and input offsets of all of them commit atomically together. A
 * transaction costs the broker about the same whatever it carries, so with many partitions this
 * keeps the broker's work per record low (one transaction per partition batch did not).
 */
export class TransactionCoalescer {
  private pending: Array<{ commit: BatchCommit; resolve: () => void; reject: (error: unknown) => void }> = [];
  private committing = false;

  constructor(
    private readonly producer: Promise<Producer>,
    private readonly groupId: string,
    private readonly group: (records: OutgoingRecord[]) => Array<{ topic: string; messages: Array<{ key: string; value: Buffer; headers?: Record<string, string> }> }>,
  ) {}

  submit(commit: BatchCommit): Promise<void> {
    const done = new Promise<void>((resolve, reject) => this.pending.push({ commit, resolve, reject }));
    if (!this.committing) void this.drain();
    return done;
  }

  private async drain(): Promise<void> {
    this.committing = true;
    try {
      while (this.pending.length > 0) {
        const round = this.pending.splice(0);
        try {
          await this.commitTogether(round.map((entry) => entry.commit));
          for (const entry of round) entry.resolve();
        } catch (error) {
          for (const entry of round) entry.reject(error);
        }
      }
    } finally {
      this.committing = false;
    }
  }

  private async commitTogether(commits: BatchCommit[]): Promise<void> {
    const producer = await this.producer;
    const transaction = await producer.transaction();
    try {
      const outputs = commits.flatMap((c) => c.outputs);
      for (const topicMessages of this.group(outputs)) await transaction.send(topicMessages);
      const byTopic = new Map<string, Array<{ partition: number; offset: string }>>();
      for (const c of commits) byTopic.set(c.topic, [...(byTopic.get(c.topic) ?? []), { partition: c.partition, offset: c.nextOffset }]);
      await transaction.sendOffsets({
        consumerGroupId: this.groupId,
        topics: [...byTopic.entries()].map(([topic, partitions]) => ({ topic, partitions })),
      });
      await transaction.commit();
    } catch (error) {
      await transaction.abort().catch(() => undefined);
      throw error;
    }
  }
}
