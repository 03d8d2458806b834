import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT_CONTEXT, trace, TraceFlags } from '@opentelemetry/api';
import { TraceState } from '@opentelemetry/core';
import { extractTraceContext, fromTraceParent, traceHeaders, traceParentOf, withTraceHeaders } from './carrier.ts';
import { recordSpans, type RecordedSpans } from './testing.ts';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const SPAN_ID = '00f067aa0ba902b7';
const TRACEPARENT = `00-${TRACE_ID}-${SPAN_ID}-01`;

/** A context continuing a remote span, as a record's consumer span would. */
const sent = trace.setSpanContext(ROOT_CONTEXT, { traceId: TRACE_ID, spanId: SPAN_ID, traceFlags: TraceFlags.SAMPLED, traceState: new TraceState('vendor=abc') });

const spanContextOf = (headers: Parameters<typeof extractTraceContext>[0]) => trace.getSpanContext(extractTraceContext(headers));

describe('trace context headers, tracing on (W3C propagator)', () => {
  let recorded: RecordedSpans;
  beforeAll(() => {
    recorded = recordSpans();
  });
  afterAll(async () => {
    await recorded.stop();
  });

  it('injects traceparent and tracestate, and reads them back as the same remote span', () => {
    const headers = traceHeaders(sent);
    expect(headers).toEqual({ traceparent: TRACEPARENT, tracestate: 'vendor=abc' });
    const back = spanContextOf(headers);
    expect(back).toMatchObject({ traceId: TRACE_ID, spanId: SPAN_ID, traceFlags: TraceFlags.SAMPLED, isRemote: true });
    expect(back?.traceState?.serialize()).toBe('vendor=abc');
  });

  it('reads kafkajs headers: Buffers, and arrays of them when a name repeats', () => {
    expect(spanContextOf({ traceparent: Buffer.from(TRACEPARENT), 'event-type': Buffer.from('SendRequested') })?.spanId).toBe(SPAN_ID);
    expect(spanContextOf({ traceparent: [Buffer.from(TRACEPARENT)] })?.spanId).toBe(SPAN_ID);
  });

  it('adds the trace headers to a record\'s own headers, leaving those as they were', () => {
    const own = { 'event-type': 'SendRequested', 'correlation-id': 'cmd_1' };
    expect(withTraceHeaders(own, sent)).toEqual({ ...own, traceparent: TRACEPARENT, tracestate: 'vendor=abc' });
    expect(own).toEqual({ 'event-type': 'SendRequested', 'correlation-id': 'cmd_1' });
    expect(withTraceHeaders(undefined, sent)).toEqual({ traceparent: TRACEPARENT, tracestate: 'vendor=abc' });
  });

  it('keeps a traceparent for a row and turns it back into the context it stands for', () => {
    expect(traceParentOf(sent)).toBe(TRACEPARENT);
    expect(trace.getSpanContext(fromTraceParent(TRACEPARENT))?.spanId).toBe(SPAN_ID);
    expect(traceParentOf(ROOT_CONTEXT)).toBeNull();
    expect(fromTraceParent(null)).toBe(ROOT_CONTEXT);
  });

  it('ignores a malformed or unreadable traceparent: the work starts a new trace', () => {
    const bad = [
      'garbage',
      '',
      `00-${TRACE_ID}-${SPAN_ID}`, // no flags
      `00-${'0'.repeat(32)}-${SPAN_ID}-01`, // all-zero trace id
      `00-${TRACE_ID}-${'0'.repeat(16)}-01`, // all-zero span id
      `ff-${TRACE_ID}-${SPAN_ID}-01`, // version ff is forbidden
      `00-${TRACE_ID.toUpperCase()}-${SPAN_ID}-01`, // upper-case hex
    ];
    for (const traceparent of bad) expect(spanContextOf({ traceparent }), traceparent).toBeUndefined();
    // Bytes that are not UTF-8 (a valid traceparent with one byte broken), as kafkajs would give them.
    const broken = Buffer.from(TRACEPARENT);
    broken[10] = 0xff;
    expect(spanContextOf({ traceparent: broken })).toBeUndefined();
    expect(spanContextOf({ traceparent: [broken] })).toBeUndefined();
    expect(spanContextOf(undefined)).toBeUndefined();
    expect(fromTraceParent('not a traceparent')).toBe(ROOT_CONTEXT);
  });
});

describe('trace context headers, tracing off (no SDK)', () => {
  it('reads nothing and writes nothing: the very same headers object goes out', () => {
    expect(spanContextOf({ traceparent: TRACEPARENT })).toBeUndefined();
    expect(traceHeaders(sent)).toEqual({});
    const own = { 'event-type': 'SendRequested' };
    expect(withTraceHeaders(own, sent)).toBe(own);
    expect(traceParentOf(sent)).toBeNull();
  });
});
