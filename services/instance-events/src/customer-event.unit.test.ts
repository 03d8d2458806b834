import { describe, expect, it } from 'vitest';
import { withoutBinaryFields } from '@gw/evolution';
import { loadFixtures } from '../../../test/fixtures/evolution/load.ts';
import { buildCustomerEvent } from './customer-event.ts';
import { mapInstanceEvent, type MapContext } from './map-event.ts';
import { contractProblems } from './testing/contract-schema.ts';

// Every customer webhook body is made by the contract's builder; these check what it makes
// against the contract's JSON Schema with an independent validator (ajv).
const ctx: MapContext = { optOutKeywords: ['STOP'], optInKeywords: ['START'], acceptedCalls: new Set() };
const origin = { eventId: 'evt_1', correlationId: 'evt_src', occurredAt: Date.UTC(2026, 0, 5, 12), customerId: 'cus_1', instanceId: 'ins_1' };
const base = { instance_id: 'ins_1', instance_name: 'reception', timestamp: new Date(Date.UTC(2026, 0, 5, 12)) };
/** What the stage adds to a message.failed of a manager's ERROR report, from its projection of our sends. */
const ourSend = { to: '+14155550101', message_purpose: 'transactional', message_id: 'msg_1' };

describe('customer events built by the contract builder', () => {
  it('every event the Evolution fixtures map to conforms to its schema in the contract', () => {
    let built = 0;
    for (const fixture of loadFixtures()) {
      const envelope = withoutBinaryFields(JSON.parse(JSON.stringify(fixture.envelope)) as Record<string, unknown>);
      for (const { event, fields } of mapInstanceEvent(envelope, ctx).events) {
        const input = { event, ...base, ...fields, ...(event === 'message.failed' ? ourSend : {}) };
        const result = buildCustomerEvent(origin, input as never);
        expect(result.kind, `${fixture.version}/${fixture.name} ${event}`).toBe('built');
        if (result.kind !== 'built') continue;
        expect(contractProblems(result.record.payload), `${fixture.version}/${fixture.name} ${event}`).toEqual([]);
        expect(result.record).toMatchObject({ event_id: 'evt_1', correlation_id: 'evt_src', customer_id: 'cus_1', instance_id: 'ins_1', event });
        built++;
      }
    }
    expect(built).toBeGreaterThan(20);
  });

  it('leaves out an optional field the manager sent malformed, and the event still goes', () => {
    const result = buildCustomerEvent(origin, { event: 'message.received', ...base, from: '+14155550101', message_text: 'hi', message_type: 'x'.repeat(300), external_message_id: 'bad\u0001id' });
    expect(result.kind).toBe('built');
    if (result.kind !== 'built') return;
    expect(result.droppedFields.sort()).toEqual(['external_message_id', 'message_type']);
    expect(contractProblems(result.record.payload)).toEqual([]);
    expect(JSON.parse(result.record.payload)).toEqual({ event: 'message.received', instance_id: 'ins_1', instance_name: 'reception', timestamp: '2026-01-05T12:00:00.000Z', from: '+14155550101', message_text: 'hi' });
  });

  it('refuses, without throwing, an event whose required fields the contract does not allow', () => {
    const result = buildCustomerEvent(origin, { event: 'message.sent', ...base, to: 'not a phone', message_purpose: 'transactional' });
    expect(result.kind).toBe('refused');
    if (result.kind === 'refused') expect(result.issues.map((i) => i.field)).toEqual(['to']);
  });
});
