export * from './event-types.ts';
export { Topics, TOPIC_NAMES, EVENT_TOPIC, type TopicName } from './topics.ts';
export { EventCodec, newEventId, derivedEventId, EVENT_TYPE_HEADER, CORRELATION_HEADER } from './codec.ts';
export { SyncRecordDecoder, EVENT_TYPES, isEventType, type RecordDecoder } from './record-decoder.ts';
export { loadSchema, AVRO_NAMESPACE } from './schemas.ts';
