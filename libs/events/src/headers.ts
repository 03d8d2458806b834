/** Record headers every event carries. */
export const EVENT_TYPE_HEADER = 'event-type';
export const CORRELATION_HEADER = 'correlation-id';
