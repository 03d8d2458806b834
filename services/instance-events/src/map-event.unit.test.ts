import { describe, expect, it } from 'vitest';
import { EXTERNAL_ID_MAX, mapInstanceEvent, matchKeyword, type MapContext } from './map-event.ts';

const ctx: MapContext = { optOutKeywords: ['STOP', 'OPT OUT'], optInKeywords: ['START'], acceptedCalls: new Set() };
const upsert = (remoteJid: string, text: string, extra: Record<string, unknown> = {}) => ({
  event: 'messages.upsert',
  data: { key: { remoteJid, fromMe: false, id: 'ABC', ...extra }, message: { conversation: text }, messageType: 'conversation' },
});

describe('matchKeyword', () => {
  it.each([
    ['stop', 'STOP'],
    ['  Stop!!! ', 'STOP'],
    ['¡¡STOP.', 'STOP'],
    ['opt   out', 'OPT OUT'],
    ['…opt out…', 'OPT OUT'],
  ])('matches %j as %s', (text, keyword) => expect(matchKeyword(text, ['STOP', 'OPT OUT'])).toBe(keyword));

  it.each(['please stop', 'stopp', '', '!!!', 'st op'])('does not match %j', (text) => expect(matchKeyword(text, ['STOP', 'OPT OUT'])).toBeNull());

  it('trims a long run of inner punctuation in time proportional to its length', () => {
    // The old trailing-edge regex retried from every dot: this input took minutes; linear, it takes milliseconds.
    const text = `a${'.'.repeat(400_000)}b`;
    const started = process.hrtime.bigint();
    expect(matchKeyword(text, ['STOP'])).toBeNull();
    expect(matchKeyword(`STOP${'.'.repeat(400_000)}`, ['STOP'])).toBe('STOP');
    // Generous: a linear trim of 800k characters takes well under a second even on a busy machine.
    expect(Number(process.hrtime.bigint() - started) / 1e6).toBeLessThan(10_000);
  }, 20_000);
});

describe('mapInstanceEvent', () => {
  it('maps a keyword from a phone JID to an opt-out fact and the recipient.opted_out event', () => {
    const mapped = mapInstanceEvent(upsert('14155552671@s.whatsapp.net', 'STOP'), ctx);
    expect(mapped.facts).toEqual([{ kind: 'suppress', recipient: '+14155552671', keyword: 'STOP', eventIndex: 0 }]);
    expect(mapped.events.map((e) => e.event)).toEqual(['message.received', 'recipient.opted_out']);
  });

  it('gives a message from a linked id the phone of its remoteJidAlt, and ignores one without', () => {
    expect(mapInstanceEvent(upsert('123456789012345@lid', 'STOP', { remoteJidAlt: '14155552671@s.whatsapp.net' }), ctx).facts).toEqual([
      { kind: 'suppress', recipient: '+14155552671', keyword: 'STOP', eventIndex: 0 },
    ]);
    expect(mapInstanceEvent(upsert('123456789012345@lid', 'STOP'), ctx)).toMatchObject({ events: [], facts: [] });
  });

  it('never takes a sender that is not a phone JID for a recipient', () => {
    for (const jid of ['\u0000', 'STOP', '+14155552671', '14155552671@example.com', 'status@broadcast']) {
      expect(mapInstanceEvent(upsert(jid, 'STOP'), ctx)).toMatchObject({ events: [], facts: [] });
    }
  });

  it('maps a group message with the participant as the sender', () => {
    const mapped = mapInstanceEvent(upsert('120363025246125486@g.us', 'hello', { participant: '14155552671@s.whatsapp.net' }), ctx);
    expect(mapped.events).toEqual([
      { event: 'group.message_received', fields: { group_id: '120363025246125486@g.us', from: '+14155552671', message_text: 'hello', external_message_id: 'ABC' } },
    ]);
    expect(mapped.facts).toEqual([]);
    expect(mapped.inbound).toEqual([{ eventIndex: 0, chat: 'group', sender: '+14155552671', groupId: '120363025246125486@g.us', text: 'hello', messageType: 'conversation', externalId: 'ABC', optAction: null }]);
  });

  it('lists each received message for the inbound log, marking keywords and free-text opt-out requests', () => {
    const actions = ['STOP', 'START', 'please stop texting me', 'see you at 3'].map((text) => mapInstanceEvent(upsert('14155552671@s.whatsapp.net', text), ctx).inbound.map((m) => [m.chat, m.sender, m.text, m.optAction]));
    expect(actions).toEqual([
      [['direct', '+14155552671', 'STOP', 'opt_out']],
      [['direct', '+14155552671', 'START', 'opt_in']],
      [['direct', '+14155552671', 'please stop texting me', 'flagged']],
      [['direct', '+14155552671', 'see you at 3', null]],
    ]);
  });

  it('keeps the delivered and read reports by provider message id, for the message timeline', () => {
    const update = (status: string) => ({ event: 'messages.update', instance: 'x', data: { keyId: 'PROV1', remoteJid: '14155552671@s.whatsapp.net', status } });
    expect(['DELIVERY_ACK', 'READ', 'PENDING'].map((status) => mapInstanceEvent(update(status), ctx).receipts)).toEqual([
      [{ externalId: 'PROV1', status: 'delivered' }],
      [{ externalId: 'PROV1', status: 'read' }],
      [],
    ]);
    // An id no provider gives (it would not fit the receipts' key and fail the batch) is not kept.
    const long = { event: 'messages.update', data: { keyId: 'P'.repeat(EXTERNAL_ID_MAX + 1), remoteJid: '14155552671@s.whatsapp.net', status: 'READ' } };
    expect(mapInstanceEvent(long, ctx).receipts).toEqual([]);
  });
});
