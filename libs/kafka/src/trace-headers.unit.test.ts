import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fromTraceParent } from '@gw/tracing';
import { recordSpans, type RecordedSpans } from '@gw/tracing/testing';
import { byTopic } from './client.ts';
import type { OutgoingRecord } from './types.ts';

// Every append (group-committed or transactional) builds its messages through byTopic.
const TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
const record = (trace?: OutgoingRecord['trace']): OutgoingRecord => ({ topic: 't', key: 'cus_1', value: Buffer.from('v'), headers: { 'event-type': 'SendDecided' }, ...(trace ? { trace } : {}) });

describe('the trace context of an appended record', () => {
  let recorded: RecordedSpans;
  beforeAll(() => {
    recorded = recordSpans();
  });
  afterAll(async () => {
    await recorded.stop();
  });

  it('goes into its headers as a traceparent, beside its own headers', () => {
    const [chunk] = byTopic([record(fromTraceParent(TRACEPARENT))]);
    expect(chunk!.messages[0]!.headers).toEqual({ 'event-type': 'SendDecided', traceparent: TRACEPARENT });
  });

  it('is not invented for a record that continues no trace', () => {
    const [chunk] = byTopic([record()]);
    expect(chunk!.messages[0]!.headers).toEqual({ 'event-type': 'SendDecided' });
  });
});
