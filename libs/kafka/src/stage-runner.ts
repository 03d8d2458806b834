// How a consume-transform-produce stage survives bad records and absent infrastructure.
//
// A batch is transformed whole. If that fails with a transient error (Postgres, the broker or the
// registry away), the same batch is tried again with backoff for as long as it takes: the records
// are fine, the world is not. If it fails otherwise, the batch is taken apart and its records are
// transformed one at a time, in order: each good record is committed on its own, and a record that
// still fails after `maxTries` is dead-lettered (its dead-letter record is the only output
// committed for it) so the stage moves past it. Order is kept for every other record.
import type { BatchContext, ConsumedRecord, OutgoingRecord, TransformBatch } from './types.ts';

export interface RecordFailure {
  error: unknown;
  /** Tries of the record on its own before it was given up. */
  tries: number;
}

export interface StageFaults {
  /** An error that says nothing about the record (infrastructure away): retried without limit. */
  isTransient(error: unknown): boolean;
  /** Tries of a record on its own before it is dead-lettered (at least 1). */
  maxTries: number;
  /** The record(s) that take a given-up record's place on the output: its dead letter. */
  deadLetter(record: ConsumedRecord, failure: RecordFailure): Promise<OutgoingRecord[]>;
  /** Told once per dead-lettered record, after its dead letter is committed. */
  onDeadLettered?(record: ConsumedRecord, failure: RecordFailure): void;
  /** Told of every failed try (the record is null when the whole batch was tried). */
  onFailure?(record: ConsumedRecord | null, error: unknown, transient: boolean): void;
  /** Backoff before the n-th retry (1-based), in ms. */
  backoffMs?(retry: number): number;
}

export interface BatchControl extends BatchContext {
  /** False once the consumer is stopping or the batch went stale (a rebalance): give the batch up. */
  isActive(): boolean;
  /** Appends outputs and commits the offset to resume from (`nextOffset`), atomically or in that order. */
  commit(outputs: OutgoingRecord[], nextOffset: string): Promise<void>;
  /** Tells the consumer the record at `offset` is done. */
  resolveOffset(offset: string): void;
  sleep?(ms: number): Promise<void>;
}

/** Thrown when a batch is given up because the consumer stops or lost the partition; it is fetched again later. */
export class BatchAbandoned extends Error {
  constructor() {
    super('batch abandoned: the consumer is stopping or lost the partition');
    this.name = 'BatchAbandoned';
  }
}

const defaultBackoff = (retry: number) => Math.min(100 * 2 ** (retry - 1), 5_000);
const realSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

type Attempt<T> = { ok: true; value: T } | { ok: false; error: unknown };

/**
 * Runs `work` until it succeeds, gives a non-transient error (returned, for the caller to count),
 * or the batch is given up. Transient errors are retried for ever, with backoff and heartbeats.
 */
async function untilNotTransient<T>(work: () => Promise<T>, record: ConsumedRecord | null, faults: StageFaults, control: BatchControl): Promise<Attempt<T>> {
  const sleep = control.sleep ?? realSleep;
  const backoff = faults.backoffMs ?? defaultBackoff;
  for (let retry = 1; ; retry++) {
    if (!control.isActive()) throw new BatchAbandoned();
    try {
      return { ok: true, value: await work() };
    } catch (error) {
      if (error instanceof BatchAbandoned) throw error;
      const transient = faults.isTransient(error);
      faults.onFailure?.(record, error, transient);
      if (!transient) return { ok: false, error };
      await sleep(backoff(retry));
      // Keeps the group membership while the infrastructure is away; throws on a rebalance.
      await control.heartbeat();
    }
  }
}

/** Commits, retrying while the broker is away (the transform is not run again for it). */
async function commitWithRetry(outputs: OutgoingRecord[], nextOffset: string, faults: StageFaults, control: BatchControl): Promise<void> {
  const committed = await untilNotTransient(() => control.commit(outputs, nextOffset), null, faults, control);
  // A commit refused for good (e.g. a fenced transactional producer) is the consumer's problem, not the record's.
  if (!committed.ok) throw committed.error;
}

const nextOf = (record: ConsumedRecord) => (BigInt(record.offset) + 1n).toString();

/** Transforms one record alone, with up to maxTries tries on non-transient errors. */
async function transformAlone(record: ConsumedRecord, transform: TransformBatch, faults: StageFaults, control: BatchControl): Promise<Attempt<OutgoingRecord[]>> {
  const sleep = control.sleep ?? realSleep;
  const backoff = faults.backoffMs ?? defaultBackoff;
  let last: Attempt<OutgoingRecord[]> = { ok: false, error: new Error('not tried') };
  for (let tries = 1; tries <= Math.max(1, faults.maxTries); tries++) {
    last = await untilNotTransient(() => transform([record], control), record, faults, control);
    if (last.ok) return last;
    if (tries < faults.maxTries) {
      await sleep(backoff(tries));
      await control.heartbeat();
    }
  }
  return last;
}

/** Processes one fetched batch of one partition (see the file comment). */
export async function processBatch(records: ConsumedRecord[], transform: TransformBatch, faults: StageFaults, control: BatchControl): Promise<void> {
  if (records.length === 0) return;
  const last = records[records.length - 1]!;
  const whole = records.length > 1 ? await untilNotTransient(() => transform(records, control), null, faults, control) : null;
  if (whole?.ok) {
    await commitWithRetry(whole.value, nextOf(last), faults, control);
    control.resolveOffset(last.offset);
    return;
  }
  // One record at a time, in order: the failure is somebody's, and only that record is put aside.
  for (const record of records) {
    const alone = await transformAlone(record, transform, faults, control);
    if (alone.ok) {
      await commitWithRetry(alone.value, nextOf(record), faults, control);
    } else {
      const failure: RecordFailure = { error: alone.error, tries: Math.max(1, faults.maxTries) };
      const letter = await untilNotTransient(() => faults.deadLetter(record, failure), record, faults, control);
      if (!letter.ok) throw letter.error;
      await commitWithRetry(letter.value, nextOf(record), faults, control);
      faults.onDeadLettered?.(record, failure);
    }
    control.resolveOffset(record.offset);
  }
}
