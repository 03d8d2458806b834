import { Gauge, type Registry } from 'prom-client';
import { readDeadLetters } from '@gw/compliance';
import type { EventCodec, Topics } from '@gw/events';
import type { KafkaInspector } from '@gw/kafka';

/**
 * The open dead letters (neither retried nor discarded) per stage, for /metrics: what
 * `gatewayctl dlq list` lists, counted from the dead-letter topic by the same reader
 * (@gw/compliance readDeadLetters). A stage with letters, all resolved, shows 0.
 */
export class DeadLetterCount {
  private readonly open: Gauge<'stage'>;

  constructor(private readonly deps: { kafka: KafkaInspector; codec: EventCodec; topics: Topics }, registry: Registry) {
    this.open = new Gauge({ name: 'gateway_dead_letters_open', help: 'Dead letters neither retried nor discarded, by the stage that gave up on the record (gatewayctl dlq list)', labelNames: ['stage'], registers: [registry] });
  }

  /** Reads the topic and sets the gauge; returns the open letters per stage. */
  async count(): Promise<Map<string, number>> {
    const letters = await readDeadLetters(this.deps.kafka, this.deps.codec, this.deps.topics);
    const byStage = new Map<string, number>();
    for (const { letter, status } of letters) byStage.set(letter.stage, (byStage.get(letter.stage) ?? 0) + (status === 'open' ? 1 : 0));
    // Reset and set with no await between: a scrape never sees the gauge half-written.
    this.open.reset();
    for (const [stage, n] of byStage) this.open.set({ stage }, n);
    return byStage;
  }
}
