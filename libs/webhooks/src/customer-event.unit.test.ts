import { describe, expect, it } from 'vitest';
import { buildCustomerEvent } from './customer-event.ts';
import { buildWebhookEvent } from './events.ts';

const origin = { eventId: 'evt_1', correlationId: 'evt_src', occurredAt: Date.UTC(2026, 0, 5, 12), customerId: 'cus_1', instanceId: 'ins_1' };
const base = { instance_id: 'ins_1', instance_name: 'reception', timestamp: new Date(Date.UTC(2026, 0, 5, 12)) };

describe('buildCustomerEvent: a customer event record around the contract builder', () => {
  it('carries the origin on the record and the builder\'s exact body', () => {
    const input = {
      event: 'instance.connection_updated',
      ...base,
      connection_state: 'close',
      restriction: 'restricted',
      restricted_until: '2026-01-06T12:00:00.000Z',
      restriction_signal: 'banned',
    } as const;
    const result = buildCustomerEvent(origin, input);
    expect(result).toEqual({
      kind: 'built',
      droppedFields: [],
      record: { event_id: 'evt_1', correlation_id: 'evt_src', occurred_at: origin.occurredAt, customer_id: 'cus_1', instance_id: 'ins_1', event: 'instance.connection_updated', payload: buildWebhookEvent(input).body },
    });
  });

  it('leaves out an optional field sent malformed, and the event still goes', () => {
    const result = buildCustomerEvent(origin, { event: 'message.received', ...base, from: '+14155550101', message_text: 'hi', message_type: 'x'.repeat(300), external_message_id: 'bad\u0001id' });
    expect(result.kind).toBe('built');
    if (result.kind !== 'built') return;
    expect(result.droppedFields.sort()).toEqual(['external_message_id', 'message_type']);
    expect(JSON.parse(result.record.payload)).toEqual({ event: 'message.received', instance_id: 'ins_1', instance_name: 'reception', timestamp: '2026-01-05T12:00:00.000Z', from: '+14155550101', message_text: 'hi' });
  });

  it('refuses, without throwing, an event whose required fields the contract does not allow', () => {
    const result = buildCustomerEvent(origin, { event: 'message.sent', ...base, to: 'not a phone', message_purpose: 'transactional' });
    expect(result.kind).toBe('refused');
    if (result.kind === 'refused') expect(result.issues.map((i) => i.field)).toEqual(['to']);
  });

  it('refuses, and drops nothing, when a required field is bad beside a bad optional one', () => {
    const result = buildCustomerEvent(origin, { event: 'message.sent', ...base, to: 'not a phone', message_purpose: 'transactional', message_id: 'bad\u0001id' });
    expect(result.kind).toBe('refused');
    if (result.kind === 'refused') expect(result.issues.map((i) => i.field).sort()).toEqual(['message_id', 'to']);
  });
});
