// The dead letters as gatewayctl's dlq commands show them. Reading the topic (each letter with its
// status) is @gw/compliance's, which verify and the projections rebuild use to skip what a stage skipped.
import type { DeadLetter } from '@gw/compliance';

export { readDeadLetters, skippedPositions, type DeadLetter, type DeadLetterStatus } from '@gw/compliance';

/** What `dlq list` shows of a letter: where it was, why, and what became of it. Never its value. */
export function summary({ letter, status, resolution }: DeadLetter) {
  return {
    id: letter.event_id,
    stage: letter.stage,
    status,
    source: { topic: letter.source_topic, partition: letter.source_partition, offset: letter.source_offset },
    customer_id: letter.customer_id || null,
    event_type: letter.source_headers['event-type'] ?? null,
    correlation_id: letter.correlation_id,
    error: letter.error,
    tries: letter.tries,
    dead_lettered_at: new Date(letter.occurred_at).toISOString(),
    resolution: resolution ? { resolution: resolution.resolution, by: resolution.by, reason: resolution.reason, at: new Date(resolution.occurred_at).toISOString() } : null,
  };
}
