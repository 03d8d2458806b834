// The dead-letter topic folded into what an operator needs: each dead letter with its status
// (open, retried, discarded). The topic holds both the letters and their resolutions, so this is
// the only state there is: no table to drift from it. Verify and the projections rebuild skip
// what a stage skipped (skippedPositions); gatewayctl's dlq commands list and resolve them.
import type { DeadLetterResolved, EventCodec, RecordDeadLettered, Topics } from '@gw/events';
import type { KafkaInspector } from '@gw/kafka';

export type DeadLetterStatus = 'open' | 'retried' | 'discarded';

export interface DeadLetter {
  letter: RecordDeadLettered;
  status: DeadLetterStatus;
  resolution: DeadLetterResolved | null;
}

/** Every dead letter on the topic, oldest first, with its latest resolution. */
export async function readDeadLetters(kafka: KafkaInspector, codec: EventCodec, topics: Topics): Promise<DeadLetter[]> {
  const topic = topics.name('deadLetters');
  if (!(await kafka.hasTopic(topic))) return [];
  const letters = new Map<string, DeadLetter>();
  const resolutions: DeadLetterResolved[] = [];
  await kafka.readToEnd(topic, {
    ends: await kafka.endOffsets(topic),
    onBatch: async (records) => {
      for (const record of records) {
        const event = await codec.decode(record);
        if (event?.type === 'RecordDeadLettered') {
          // The same record given up twice (a redelivered batch) has the same id: one letter.
          if (!letters.has(event.payload.event_id)) letters.set(event.payload.event_id, { letter: event.payload, status: 'open', resolution: null });
        } else if (event?.type === 'DeadLetterResolved') {
          resolutions.push(event.payload);
        }
      }
    },
  });
  // Partitions interleave: resolutions are applied once every letter is known.
  for (const resolution of resolutions.sort((a, b) => a.occurred_at - b.occurred_at)) {
    const found = letters.get(resolution.dead_letter_id);
    if (found) Object.assign(found, { status: resolution.resolution, resolution });
  }
  return [...letters.values()].sort((a, b) => a.letter.occurred_at - b.letter.occurred_at);
}

/**
 * The positions (partition@offset) of a topic's records a stage moved past: a replay of that
 * stage (the policy-log verify, the projections rebuild) skips them as the stage did. A retried
 * letter's record is skipped too: the retry appended a copy, which is replayed where it landed.
 */
export function skippedPositions(letters: DeadLetter[], stage: string, topic: string): Set<string> {
  return new Set(letters.filter(({ letter }) => letter.stage === stage && letter.source_topic === topic).map(({ letter }) => `${letter.source_partition}@${letter.source_offset}`));
}
