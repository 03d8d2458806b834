import { COMPATIBILITY, SchemaRegistry, SchemaType } from '@kafkajs/confluent-schema-registry';
import { createHash, randomUUID } from 'node:crypto';
import type { ConsumedRecord, OutgoingRecord } from '@gw/kafka';
import type { AnyEvent, EventPayloads, EventType } from './event-types.ts';
import { AVRO_NAMESPACE, loadSchema } from './schemas.ts';
import type { Topics } from './topics.ts';

import { CORRELATION_HEADER, EVENT_TYPE_HEADER } from './headers.ts';
import { EVENT_TYPES, SyncRecordDecoder } from './record-decoder.ts';

export { CORRELATION_HEADER, EVENT_TYPE_HEADER };

/**
 * Encodes events in the Confluent wire format (magic byte, schema id, Avro body) with schemas
 * registered in the registry under the topic-record subject naming (topic-namespace.Record),
 * so several event types can share one topic and any Confluent-compatible reader can decode them.
 */
export class EventCodec {
  private readonly registry: SchemaRegistry;
  private readonly schemaIds = new Map<EventType, number>();
  private readonly decoder: SyncRecordDecoder;

  constructor(private readonly registryUrl: string, private readonly topics: Topics) {
    this.registry = new SchemaRegistry({ host: registryUrl, retry: { retries: 5 } });
    this.decoder = new SyncRecordDecoder(registryUrl, this.registry);
  }

  static subject(topic: string, type: EventType): string {
    return `${topic}-${AVRO_NAMESPACE}.${type}`;
  }

  /** Registers every event schema (idempotent: the same schema keeps its id). */
  async init(types: EventType[] = EVENT_TYPES): Promise<void> {
    for (const type of types) {
      const subject = EventCodec.subject(this.topics.forEvent(type), type);
      this.schemaIds.set(type, await this.register(subject, loadSchema(type)));
    }
  }

  private async register(subject: string, schema: string): Promise<number> {
    for (let attempt = 1; ; attempt++) {
      try {
        const { id } = await this.registry.register({ type: SchemaType.AVRO, schema }, { subject, compatibility: COMPATIBILITY.BACKWARD });
        return id;
      } catch (error) {
        // Services starting together race on a fresh subject: one registers it while another
        // sets its compatibility rule (409), or reads it before the rule exists (a mismatch).
        // Setting the rule ourselves and retrying settles both.
        const conflict = (error as { status?: number }).status === 409 || (error as Error).name === 'ConfluentSchemaRegistryCompatibilityError';
        if (!conflict || attempt >= 5) throw error;
        await this.setCompatibility(subject, COMPATIBILITY.BACKWARD);
        await new Promise((resolve) => setTimeout(resolve, 50 * attempt));
      }
    }
  }

  private async setCompatibility(subject: string, compatibility: string): Promise<void> {
    const response = await fetch(`${this.registryUrl}/config/${encodeURIComponent(subject)}`, {
      method: 'PUT',
      headers: { 'content-type': 'application/vnd.schemaregistry.v1+json' },
      body: JSON.stringify({ compatibility }),
      signal: AbortSignal.timeout(10_000),
    });
    // 409: the rule exists already, which is what we want.
    if (!response.ok && response.status !== 409) throw new Error(`registry refused the compatibility rule for ${subject} (HTTP ${response.status})`);
  }

  schemaId(type: EventType): number {
    const id = this.schemaIds.get(type);
    if (id === undefined) throw new Error(`schema for ${type} is not registered; call init() first`);
    return id;
  }

  /** `trace`: the trace the record continues (OutgoingRecord.trace), e.g. the span of the event it answers. */
  async encode<T extends EventType>(type: T, payload: EventPayloads[T], trace?: OutgoingRecord['trace']): Promise<OutgoingRecord> {
    const value = await this.registry.encode(this.schemaId(type), payload);
    return {
      topic: this.topics.forEvent(type),
      key: payload.customer_id,
      value,
      headers: { [EVENT_TYPE_HEADER]: type, [CORRELATION_HEADER]: payload.correlation_id },
      ...(trace ? { trace } : {}),
    };
  }

  /** The event a record carries (null: none), decoded with the writer's schema. */
  async decode(record: ConsumedRecord): Promise<AnyEvent | null> {
    return this.decoder.decode(record);
  }

  /** As decode, without a promise once the record's schema is known (for hot loops). */
  decodeNow(record: ConsumedRecord): AnyEvent | null | Promise<AnyEvent | null> {
    return this.decoder.decode(record);
  }
}

export function newEventId(): string {
  return randomUUID();
}

/**
 * A stable event id for an output derived from a source (an event id, a message id) and a label:
 * a redelivered batch yields the same id, so its copy is recognisably the same record.
 */
export function derivedEventId(source: string, label: string): string {
  const hex = createHash('sha256').update(`${source}:${label}`).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}
