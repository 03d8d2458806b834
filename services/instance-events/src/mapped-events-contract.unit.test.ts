import { describe, expect, it } from 'vitest';
import { withoutBinaryFields } from '@gw/evolution';
import { buildCustomerEvent } from '@gw/webhooks';
import { loadFixtures } from '../../../test/fixtures/evolution/load.ts';
import { mapInstanceEvent, type MapContext } from './map-event.ts';
import { contractProblems } from './testing/contract-schema.ts';

// Every customer webhook body the ingest makes is made by the shared builder (buildCustomerEvent,
// libs/webhooks, tested there); this checks what it makes of the mapped Evolution fixtures against
// the contract's JSON Schema with an independent validator (ajv).
const ctx: MapContext = { optOutKeywords: ['STOP'], optInKeywords: ['START'], acceptedCalls: new Set() };
const origin = { eventId: 'evt_1', correlationId: 'evt_src', occurredAt: Date.UTC(2026, 0, 5, 12), customerId: 'cus_1', instanceId: 'ins_1' };
const base = { instance_id: 'ins_1', instance_name: 'reception', timestamp: new Date(Date.UTC(2026, 0, 5, 12)) };
/** What the stage adds to a message.failed of a manager's ERROR report, from its projection of our sends. */
const ourSend = { to: '+14155550101', message_purpose: 'transactional', message_id: 'msg_1' };

describe('customer events of the mapped Evolution fixtures', () => {
  it('every event the fixtures map to conforms to its schema in the contract', () => {
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

  it('a malformed optional field left out still gives a body the contract\'s schema accepts', () => {
    const result = buildCustomerEvent(origin, { event: 'message.received', ...base, from: '+14155550101', message_text: 'hi', message_type: 'x'.repeat(300), external_message_id: 'bad\u0001id' });
    expect(result.kind).toBe('built');
    if (result.kind === 'built') expect(contractProblems(result.record.payload)).toEqual([]);
  });
});
