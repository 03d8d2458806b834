// The trace of a stage's work: one consumer span per event it takes, each a child of the trace
// context its record carries. The handler gets each event with its span's context (StageEvents'
// `trace`) and gives it to the records it emits for that event (OutgoingRecord.trace, e.g. through
// codec.encode's third argument), so the next stage continues the same trace. Spans are per event,
// not per batch: a batch holds many customers' sends, each its own trace.
import type { AnyEvent } from '@gw/events';
import type { ConsumedRecord } from '@gw/kafka';
import {
  ATTR_GATEWAY_EVENT_TYPE,
  ATTR_MESSAGING_MESSAGE_CONVERSATION_ID,
  ATTR_MESSAGING_MESSAGE_ID,
  endSpan,
  startConsumerSpan,
  type Span,
  type TraceContext,
} from '@gw/tracing';

const SCOPE = '@gw/runtime';

export interface TracedEvents<E> {
  events: Array<{ offset: bigint; event: E; trace: TraceContext }>;
  /** Ends every span of the batch: all failed when the handler threw. */
  end(error?: unknown): void;
}

export function traceEvents<E extends AnyEvent>(group: string, decoded: Array<{ record: ConsumedRecord; event: E }>): TracedEvents<E> {
  const spans: Span[] = [];
  const events = decoded.map(({ record, event }) => {
    // Ids only: the payload (phone numbers, texts) never goes into a span.
    const { span, trace } = startConsumerSpan(SCOPE, record, group, {
      [ATTR_GATEWAY_EVENT_TYPE]: event.type,
      [ATTR_MESSAGING_MESSAGE_ID]: event.payload.event_id,
      [ATTR_MESSAGING_MESSAGE_CONVERSATION_ID]: event.payload.correlation_id,
    });
    spans.push(span);
    return { offset: BigInt(record.offset), event, trace };
  });
  return {
    events,
    end(error?: unknown) {
      for (const span of spans) endSpan(span, error);
    },
  };
}
