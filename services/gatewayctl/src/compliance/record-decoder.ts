// The replay decodes with the events library's synchronous decoder (the one EventCodec.decode uses).
import { EVENT_TYPES, isEventType, SyncRecordDecoder, type EventCodec, type RecordDecoder } from '@gw/events';

export { EVENT_TYPES, isEventType, SyncRecordDecoder, type RecordDecoder };

/** EventCodec's own decode (the replay on the calling thread without connection settings). */
export const codecDecoder = (codec: EventCodec): RecordDecoder => ({ decode: (record) => codec.decodeNow(record) });
