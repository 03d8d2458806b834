// Decoding of the Confluent wire format, synchronous once a record's schema id has been seen:
// only a record with an id not loaded yet waits for the registry. EventCodec.decode is this; hot
// loops (the compliance replay decodes every record of customer-events) call it without a promise
// per record.
import { SchemaRegistry } from '@kafkajs/confluent-schema-registry';
import type { AnyEvent, EventType } from './event-types.ts';
import { EVENT_TYPE_HEADER } from './headers.ts';
import { EVENT_TOPIC } from './topics.ts';
import type { ConsumedRecord } from '@gw/kafka';

/** What the replay needs from a decoder: an event, null for a record that carries none, or a promise of either. */
export interface RecordDecoder {
  decode(record: ConsumedRecord): AnyEvent | null | Promise<AnyEvent | null>;
}

/** The event types EventCodec decodes (a record with another event-type header carries no event). */
export const EVENT_TYPES = Object.keys(EVENT_TOPIC) as EventType[];
export const isEventType = (type: string | undefined): type is EventType => typeof type === 'string' && type !== '' && Object.hasOwn(EVENT_TOPIC, type);

interface AvroType {
  fromBuffer(buffer: Buffer): unknown;
}

/** Confluent wire format: magic byte 0, then the schema id (int32 big-endian), then the Avro body. */
const HEADER_BYTES = 5;

export class SyncRecordDecoder implements RecordDecoder {
  private readonly registry: SchemaRegistry;
  private readonly types = new Map<number, AvroType>();

  /** `registry`: a client to share (EventCodec passes its own); otherwise one like it (same host and retries). */
  constructor(registryUrl: string, registry?: SchemaRegistry) {
    this.registry = registry ?? new SchemaRegistry({ host: registryUrl, retry: { retries: 5 } });
  }

  decode(record: ConsumedRecord): AnyEvent | null | Promise<AnyEvent | null> {
    const type = record.headers[EVENT_TYPE_HEADER];
    if (!isEventType(type) || !record.value) return null;
    return this.decodeValue(type, record.value);
  }

  /** The decode of a record whose event-type header (a known type) and value (not null) were checked already. */
  decodeValue(type: EventType, value: Buffer): AnyEvent | Promise<AnyEvent> {
    // Anything but a well-formed header with a known schema id goes the codec's own way (same errors).
    if (!Buffer.isBuffer(value) || value.length < HEADER_BYTES || value[0] !== 0) return this.decodeSlow(type, value);
    const avro = this.types.get(value.readInt32BE(1));
    if (!avro) return this.decodeSlow(type, value);
    return { type, payload: avro.fromBuffer(value.subarray(HEADER_BYTES)) } as AnyEvent;
  }

  private async decodeSlow(type: EventType, value: Buffer): Promise<AnyEvent> {
    const payload = await this.registry.decode(value);
    // The registry client caches the writer schema by id: the next record with this id is decoded here.
    const id = value.readInt32BE(1);
    if (!this.types.has(id)) {
      const schema = (await this.registry.getSchema(id)) as unknown as Partial<AvroType>;
      if (typeof schema.fromBuffer === 'function') this.types.set(id, schema as AvroType);
    }
    return { type, payload } as AnyEvent;
  }
}
