// Spans of Kafka work, with the messaging semantic conventions: a consumer span per record a
// stage processes (a child of the context the record carries), a producer span per append.
import type { Attributes } from '@opentelemetry/api';
import { extractTraceContext, type HeaderCarrier, type TraceContext } from './carrier.ts';
import {
  ATTR_MESSAGING_CONSUMER_GROUP_NAME,
  ATTR_MESSAGING_DESTINATION_NAME,
  ATTR_MESSAGING_DESTINATION_PARTITION_ID,
  ATTR_MESSAGING_KAFKA_MESSAGE_KEY,
  ATTR_MESSAGING_KAFKA_OFFSET,
  ATTR_MESSAGING_OPERATION_NAME,
  ATTR_MESSAGING_OPERATION_TYPE,
  ATTR_MESSAGING_SYSTEM,
} from './semconv.ts';
import { inSpan, SpanKind, startSpan, type StartedSpan } from './spans.ts';

/** What a consumer span needs of a fetched record (ConsumedRecord of @gw/kafka fits). */
export interface ConsumedMessage {
  topic: string;
  partition: number;
  offset: string;
  /** The customer id on every gateway topic. */
  key: string | null;
  headers: HeaderCarrier;
}

/**
 * A `process <topic>` consumer span for one record, a child of the trace context the record
 * carries (a new trace when it carries none or a malformed one). `attributes`: the event's ids.
 */
export function startConsumerSpan(scope: string, message: ConsumedMessage, group: string, attributes: Attributes = {}): StartedSpan {
  return startSpan(
    scope,
    `process ${message.topic}`,
    {
      kind: SpanKind.CONSUMER,
      attributes: {
        [ATTR_MESSAGING_SYSTEM]: 'kafka',
        [ATTR_MESSAGING_OPERATION_TYPE]: 'process',
        [ATTR_MESSAGING_OPERATION_NAME]: 'process',
        [ATTR_MESSAGING_DESTINATION_NAME]: message.topic,
        [ATTR_MESSAGING_DESTINATION_PARTITION_ID]: String(message.partition),
        [ATTR_MESSAGING_KAFKA_OFFSET]: Number(message.offset),
        [ATTR_MESSAGING_CONSUMER_GROUP_NAME]: group,
        ...(message.key !== null ? { [ATTR_MESSAGING_KAFKA_MESSAGE_KEY]: message.key } : {}),
        ...attributes,
      },
    },
    extractTraceContext(message.headers),
  );
}

/** Runs `append` in a `send <topic>` producer span (failed if it throws); the appended record carries the span's context (`trace`). */
export function inProducerSpan<T>(scope: string, topic: string, parent: TraceContext | undefined, attributes: Attributes, append: (started: StartedSpan) => Promise<T>): Promise<T> {
  const spec = {
    kind: SpanKind.PRODUCER,
    attributes: {
      [ATTR_MESSAGING_SYSTEM]: 'kafka',
      [ATTR_MESSAGING_OPERATION_TYPE]: 'send',
      [ATTR_MESSAGING_OPERATION_NAME]: 'send',
      [ATTR_MESSAGING_DESTINATION_NAME]: topic,
      ...attributes,
    },
  };
  return inSpan(scope, `send ${topic}`, spec, parent, append);
}
