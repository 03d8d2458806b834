import { describe, expect, it } from 'vitest';
import { envelopeProblem, withoutBinaryFields } from '@gw/evolution';
import { EXTERNAL_ID_MAX, mapInstanceEvent, matchKeyword, type MapContext } from './map-event.ts';
import { endTime } from './restriction-signals.ts';

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

  it('gives a message from a linked id the phone of its remoteJidAlt, and keeps one without under the lid', () => {
    expect(mapInstanceEvent(upsert('123456789012345@lid', 'STOP', { remoteJidAlt: '14155552671@s.whatsapp.net' }), ctx).facts).toEqual([
      { kind: 'suppress', recipient: '+14155552671', keyword: 'STOP', eventIndex: 0 },
    ]);
    // Row 2: a lid-only sender (no phone anywhere) is kept, its STOP honoured under the canonical lid (device dropped).
    const lidOnly = mapInstanceEvent(upsert('123456789012345:12@lid', 'STOP'), ctx);
    expect(lidOnly.facts).toEqual([{ kind: 'suppress', recipient: '123456789012345@lid', keyword: 'STOP', eventIndex: 0 }]);
    expect(lidOnly.events).toEqual([
      { event: 'message.received', fields: { from: '123456789012345@lid', from_lid: '123456789012345@lid', message_text: 'STOP', message_type: 'conversation', external_message_id: 'ABC' } },
      { event: 'recipient.opted_out', fields: { from: '123456789012345@lid', from_lid: '123456789012345@lid', reason: 'keyword:STOP', message_text: 'STOP' } },
    ]);
    expect(lidOnly.inbound.map((m) => [m.sender, m.optAction])).toEqual([['123456789012345@lid', 'opt_out']]);
    expect(lidOnly.links).toEqual([]);
  });

  it('finds the phone and the lid of a direct message in the key of every version', () => {
    const phone = '14155552671@s.whatsapp.net';
    const lid = '123456789012345@lid';
    const keys = {
      // 2.3.6: the key as Baileys gives it.
      '2.3.6': { remoteJid: lid, remoteJidAlt: phone, addressingMode: 'lid' },
      // 2.3.7: remoteJid overwritten with the phone, remoteJidAlt kept (the lid is lost).
      '2.3.7': { remoteJid: phone, remoteJidAlt: phone, addressingMode: 'lid' },
      // 2.4.0-rc2: swapped.
      '2.4.0-rc2': { remoteJid: phone, remoteJidAlt: lid, addressingMode: 'pn' },
      // Baileys 6 names.
      'senderPn': { remoteJid: lid, senderPn: phone },
    };
    const mapped = Object.entries(keys).map(([version, key]) => {
      const out = mapInstanceEvent({ event: 'messages.upsert', data: { key: { fromMe: false, id: 'ABC', ...key }, message: { conversation: 'hi' } } }, ctx);
      return [version, out.events[0]?.fields.from, out.events[0]?.fields.from_lid, out.links];
    });
    expect(mapped).toEqual([
      ['2.3.6', '+14155552671', lid, [{ lid, phone: '+14155552671' }]],
      ['2.3.7', '+14155552671', undefined, []],
      ['2.4.0-rc2', '+14155552671', lid, [{ lid, phone: '+14155552671' }]],
      ['senderPn', '+14155552671', lid, [{ lid, phone: '+14155552671' }]],
    ]);
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
    const update = (status: string) => ({ event: 'messages.update', instance: 'x', data: { keyId: 'PROV1', remoteJid: '14155552671@s.whatsapp.net', fromMe: true, status } });
    expect(['DELIVERY_ACK', 'READ', 'PENDING'].map((status) => mapInstanceEvent(update(status), ctx).receipts)).toEqual([
      [{ externalId: 'PROV1', status: 'delivered' }],
      [{ externalId: 'PROV1', status: 'read' }],
      [],
    ]);
    // An id no provider gives (it would not fit the receipts' key and fail the batch) is not kept.
    const long = { event: 'messages.update', data: { keyId: 'P'.repeat(EXTERNAL_ID_MAX + 1), remoteJid: '14155552671@s.whatsapp.net', fromMe: true, status: 'READ' } };
    expect(mapInstanceEvent(long, ctx).receipts).toEqual([]);
  });

  it('takes a READ or DELETED update as a receipt only for a message we sent (fromMe)', () => {
    // Evolution posts READ with fromMe false when the business's own phone reads a message it received (issue #2010).
    const update = (fromMe: boolean, status: string) => mapInstanceEvent({ event: 'messages.update', data: { keyId: 'PROV2', remoteJid: '14155552671@s.whatsapp.net', fromMe, status } }, ctx);
    for (const status of ['READ', 'DELETED']) expect(update(false, status)).toMatchObject({ events: [], receipts: [] });
    expect(update(true, 'READ').events.map((e) => e.event)).toEqual(['message.read', 'message.status_updated']);
  });

  it('maps chats.upsert from remoteJid, its id being the manager\'s row id', () => {
    const envelope = { event: 'chats.upsert', data: [{ id: 'cmfz8q0x30001qk0h7g6l2v1a', remoteJid: '14155552671@s.whatsapp.net', name: 'Ana', unreadMessages: 0 }] };
    expect(envelopeProblem(envelope)).toBeNull();
    expect(mapInstanceEvent(envelope, ctx).events).toEqual([{ event: 'conversation.updated', fields: { conversation_id: '14155552671@s.whatsapp.net' } }]);
    // No remoteJid: nothing (the row id is no conversation id).
    expect(mapInstanceEvent({ event: 'chats.upsert', data: [{ id: 'cmfz8q0x30001qk0h7g6l2v1a' }] }, ctx).events).toEqual([]);
  });

  it('gives a call and a group sender the phone when one is given, else the lid', () => {
    const call = (extra: Record<string, unknown>) => mapInstanceEvent({ event: 'call', data: { id: 'C1', status: 'offer', isVideo: false, ...extra } }, ctx);
    expect(call({ from: '123456789012345:3@lid', chatId: '123456789012345@lid' }).events).toEqual([
      { event: 'call.received', fields: { from: '123456789012345@lid', from_lid: '123456789012345@lid', call_status: 'offer' } },
    ]);
    // Evolution swaps a lid `from` for the phone when it answers calls; chatId stays the lid.
    const swapped = call({ from: '14155552671:7@s.whatsapp.net', chatId: '123456789012345@lid' });
    expect(swapped.events[0]?.fields).toEqual({ from: '+14155552671', from_lid: '123456789012345@lid', call_status: 'offer' });
    expect(swapped.links).toEqual([{ lid: '123456789012345@lid', phone: '+14155552671' }]);
    expect(call({ from: '123456789012345@lid', callerPn: '14155552671@s.whatsapp.net' }).events[0]?.fields.from).toBe('+14155552671');

    const group = mapInstanceEvent(upsert('120363025246125486@g.us', 'hi', { participant: '123456789012345@lid', participantAlt: '14155552671@s.whatsapp.net' }), ctx);
    expect(group.events[0]?.fields).toMatchObject({ from: '+14155552671', from_lid: '123456789012345@lid' });
    expect(group.inbound[0]?.sender).toBe('+14155552671');
    expect(mapInstanceEvent(upsert('120363025246125486@g.us', 'hi', { participant: '123456789012345@lid' }), ctx).events[0]?.fields.from).toBe('123456789012345@lid');
  });

  it('does not claim a QR when the manager reports the QR limit, and maps the refusal that follows', () => {
    const limit = mapInstanceEvent({ event: 'qrcode.updated', data: { message: 'QR code limit reached, please login again', statusCode: 500 } }, ctx);
    expect(limit.events).toEqual([{ event: 'instance.qr_updated', fields: { qr_available: false, reason: 'qr_code_limit_reached' } }]);
    expect(limit.connection).toMatchObject({ state: null, qrAvailable: false });
    const qr = mapInstanceEvent({ event: 'qrcode.updated', data: { qrcode: { instance: 'x', pairingCode: null, code: '2@abc' } } }, ctx);
    expect(qr.events).toEqual([{ event: 'instance.qr_updated', fields: { qr_available: true } }]);
    const refused = mapInstanceEvent({ event: 'connection.update', data: { instance: 'x', state: 'refused', statusReason: 428 } }, ctx);
    expect(refused.events.map((e) => e.event)).toEqual(['instance.disconnected', 'instance.connection_updated']);
    expect(refused.connection).toMatchObject({ state: 'close', qrAvailable: false });
  });

  it('orders connection reports by the envelope\'s date_time, null when it has none', () => {
    const at = (date_time: unknown) => mapInstanceEvent({ event: 'connection.update', date_time, data: { state: 'open' } }, ctx).connection?.reportedAt;
    expect(at('2025-11-24T09:15:02.123Z')).toBe(Date.UTC(2025, 10, 24, 9, 15, 2, 123));
    expect([at(undefined), at('yesterday'), at(12), at('2025-99-99T00:00:00Z')]).toEqual([null, null, null, null]);
  });

  it('drops media bytes before the checks, so a captioned photo with its base64 is taken and mapped', () => {
    const photo = {
      event: 'messages.upsert',
      data: {
        key: { remoteJid: '14155552671@s.whatsapp.net', fromMe: false, id: 'IMG1' },
        messageType: 'imageMessage',
        message: { imageMessage: { caption: 'my order', mimetype: 'image/jpeg', jpegThumbnail: { 0: 255, 1: 216 }, mediaKey: 'k'.repeat(44) }, base64: 'A'.repeat(2_000_000) },
      },
    };
    expect(envelopeProblem(photo)).not.toBeNull();
    const kept = withoutBinaryFields(photo);
    expect(envelopeProblem(kept)).toBeNull();
    expect(JSON.stringify(kept).length).toBeLessThan(400);
    expect(kept.data.message).toEqual({ imageMessage: { caption: 'my order', mimetype: 'image/jpeg' } });
    expect(mapInstanceEvent(kept, ctx).events[0]?.fields.message_text).toBe('my order');
    // A real text field over the limit is still refused.
    expect(envelopeProblem(withoutBinaryFields(upsert('14155552671@s.whatsapp.net', 'x'.repeat(70_000))))).not.toBeNull();
  });
});

describe('restriction signals (the number guard, issue 27)', () => {
  it('an end time is epoch seconds, ms or ISO, and never one a Date cannot hold (it is written as ISO downstream)', () => {
    expect(endTime(1_800_000_000)).toBe(1_800_000_000_000);
    expect(endTime('1800000000000')).toBe(1_800_000_000_000);
    expect(endTime('2027-01-01T00:00:00Z')).toBe(Date.parse('2027-01-01T00:00:00Z'));
    for (const bad of [1e300, 9e15, -5, Number.NaN, 'soon', '1'.repeat(50)]) expect(endTime(bad)).toBeNull();
  });

  const update = (data: Record<string, unknown>) => ({ event: 'messages.update', date_time: '2026-02-01T10:00:00.000Z', data: { keyId: '3EB0AA', remoteJid: '14155552671@s.whatsapp.net', fromMe: true, status: 'ERROR', ...data } });
  const signals = (envelope: Record<string, unknown>) => mapInstanceEvent(envelope, ctx).restrictions;

  it('reads an ERROR with no code, all Evolution 2.3.6–2.4.0-rc2 post for a refused send, as a possible restriction of our send', () => {
    expect(signals(update({}))).toEqual([{ signal: 'send_error', code: null, until: null, externalMessageId: '3EB0AA', ourSendOnly: true, ref: '3EB0AA' }]);
    // Any other status, or a message the business's phone did not send, is no signal.
    expect(signals(update({ status: 'DELIVERY_ACK' }))).toEqual([]);
    expect(signals(update({ fromMe: false }))).toEqual([]);
  });

  it('maps the codes a manager that forwards messageStubParameters gives, with the end time when present', () => {
    expect(signals(update({ messageStubParameters: ['463'], timeEnforcementEnds: '1769940000' }))).toEqual([
      { signal: 'reachout_timelock', code: '463', until: 1_769_940_000_000, externalMessageId: '3EB0AA', ourSendOnly: false, ref: '3EB0AA' },
    ]);
    expect(signals(update({ messageStubParameters: ['475'] }))[0]).toMatchObject({ signal: 'message_capping', code: '475', until: null });
    expect(signals(update({ messageStubParameters: [479] }))[0]).toMatchObject({ signal: 'send_error', code: '479', ourSendOnly: false });
    // A stub parameter that is no restriction code leaves the plain ERROR reading.
    expect(signals(update({ messageStubParameters: ['Bad MAC'] }))[0]).toMatchObject({ signal: 'send_error', code: null, ourSendOnly: true });
  });

  it('reads a 401 close as logged out and a 403 close as banned, keyed by the report time; other closes are no signal', () => {
    const close = (statusReason: number) => ({ event: 'connection.update', date_time: '2026-02-01T10:00:00.000Z', data: { instance: 'x', state: 'close', statusReason } });
    expect(signals(close(401))).toEqual([{ signal: 'logged_out', code: '401', until: null, ourSendOnly: false, ref: '2026-02-01T10:00:00.000Z' }]);
    expect(signals(close(403))).toEqual([{ signal: 'banned', code: '403', until: null, ourSendOnly: false, ref: '2026-02-01T10:00:00.000Z' }]);
    expect(signals(close(406))).toEqual([]);
    expect(signals({ event: 'connection.update', data: { instance: 'x', state: 'open', statusReason: 403 } })).toEqual([]);
  });

  it('reads a reachout timelock that a newer manager puts on connection.update, with its end time', () => {
    const envelope = { event: 'connection.update', date_time: '2026-02-01T10:00:00.000Z', data: { instance: 'x', state: 'open', reachoutTimeLock: { isActive: true, timeEnforcementEnds: '2026-02-02T10:00:00.000Z' } } };
    expect(signals(envelope)).toEqual([{ signal: 'reachout_timelock', code: '463', until: Date.parse('2026-02-02T10:00:00.000Z'), ourSendOnly: false, ref: '2026-02-01T10:00:00.000Z' }]);
    expect(signals({ ...envelope, data: { ...envelope.data, reachoutTimeLock: { isActive: false } } })).toEqual([]);
  });
});
