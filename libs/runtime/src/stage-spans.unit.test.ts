import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { AnyEvent } from '@gw/events';
import type { ConsumedRecord } from '@gw/kafka';
import { spanOf, SpanKind } from '@gw/tracing';
import { recordSpans, type ReadableSpan, type RecordedSpans } from '@gw/tracing/testing';
import { traceEvents } from './stage-spans.ts';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const SPAN_ID = '00f067aa0ba902b7';
const PHONE = '+14155552671';
const TEXT = 'Your code is 493817';

const record = (offset: number, headers: Record<string, string>): ConsumedRecord => ({
  topic: 'gw.policy-decisions.v1',
  partition: 2,
  offset: String(offset),
  key: 'cus_1',
  value: Buffer.from('avro'),
  headers: { 'event-type': 'SendDecided', ...headers },
  timestamp: '0',
});
const decision = (id: string) =>
  ({ type: 'SendDecided', payload: { event_id: `evt_${id}`, correlation_id: `cmd_${id}`, customer_id: 'cus_1', message_id: `msg_${id}`, recipient: PHONE, dispatch: { phone: PHONE, text: TEXT } } }) as unknown as AnyEvent;

let recorded: RecordedSpans;
beforeAll(() => {
  recorded = recordSpans();
});
afterAll(async () => {
  await recorded.stop();
});

describe('stage spans: one consumer span per event a stage takes', () => {
  let spans: ReadableSpan[];
  let events: ReturnType<typeof traceEvents>['events'];
  beforeEach(() => {
    const traced = traceEvents('gw.delivery', [
      { record: record(41, { traceparent: `00-${TRACE_ID}-${SPAN_ID}-01` }), event: decision('a') },
      { record: record(42, { traceparent: 'not-a-traceparent' }), event: decision('b') },
      { record: record(43, { traceparent: `00-${TRACE_ID}-${SPAN_ID}-\uFFFD1` }), event: decision('c') },
    ]);
    events = traced.events;
    const before = recorded.finished().length;
    traced.end();
    spans = recorded.finished().slice(before);
  });

  it('continues the trace its record carries, and gives the event that span\'s context', () => {
    const [span] = spans;
    expect(span!.kind).toBe(SpanKind.CONSUMER);
    expect(span!.name).toBe('process gw.policy-decisions.v1');
    expect(span!.spanContext().traceId).toBe(TRACE_ID);
    expect(span!.parentSpanContext?.spanId).toBe(SPAN_ID);
    expect(spanOf(events[0]!.trace)?.spanContext().spanId).toBe(span!.spanContext().spanId);
    expect(events.map((e) => e.offset)).toEqual([41n, 42n, 43n]);
    expect(span!.attributes).toMatchObject({
      'messaging.system': 'kafka',
      'messaging.operation.type': 'process',
      'messaging.destination.name': 'gw.policy-decisions.v1',
      'messaging.destination.partition.id': '2',
      'messaging.kafka.offset': 41,
      'messaging.consumer.group.name': 'gw.delivery',
      'messaging.kafka.message.key': 'cus_1',
      'messaging.message.id': 'evt_a',
      'messaging.message.conversation_id': 'cmd_a',
      'gateway.event_type': 'SendDecided',
    });
  });

  it('starts a new trace for a record whose traceparent is malformed, and still hands the event on', () => {
    for (const span of spans.slice(1)) {
      expect(span.parentSpanContext).toBeUndefined();
      expect(span.spanContext().traceId).not.toBe(TRACE_ID);
    }
    expect(events.map((e) => e.event.payload.event_id)).toEqual(['evt_a', 'evt_b', 'evt_c']);
  });

  it('puts ids in the spans, never the payload\'s phone number or text', () => {
    for (const span of spans) {
      const values = JSON.stringify([span.name, span.attributes]);
      expect(values).not.toContain(PHONE.slice(1));
      expect(values).not.toContain(TEXT);
    }
  });
});

describe('stage spans of a failed batch', () => {
  it('end failed, with the error\'s type and not its message', () => {
    const traced = traceEvents('gw.delivery', [{ record: record(7, {}), event: decision('x') }]);
    const before = recorded.finished().length;
    traced.end(Object.assign(new Error(`could not send to ${PHONE}`), { code: 'ECONNRESET' }));
    const [span] = recorded.finished().slice(before);
    expect(span!.status.code).toBe(2); // SpanStatusCode.ERROR
    expect(span!.status.message).toBeUndefined();
    expect(span!.attributes['error.type']).toBe('ECONNRESET');
  });
});
