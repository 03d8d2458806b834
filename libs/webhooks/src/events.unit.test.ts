import { describe, expect, it, vi } from 'vitest';
import {
  WEBHOOK_EVENT_FIELDS,
  WEBHOOK_EVENT_GROUPS,
  WEBHOOK_EVENT_NAMES,
  WebhookPayloadError,
  WebhookSubscriptionError,
  buildWebhookEvent,
  parseWebhookEvent,
  resolveSubscription,
  validateWebhookEvent,
  webhookEventJsonSchema,
  withWebhookId,
  type WebhookEventName,
} from './events.ts';

const base = { instance_id: 42, instance_name: 'Support line', timestamp: new Date('2025-01-31T12:00:00Z') };

/** A valid input with every required and optional field, per event. */
function fullInput(event: WebhookEventName): Record<string, unknown> {
  const values: Record<string, unknown> = {
    from: '+15551234567',
    to: '+4915112345678',
    message_purpose: 'support',
    message_text: 'hello',
    error: 'unknown_number',
    reason: 'STOP keyword',
    message_type: 'text',
    external_message_id: 'wamid.ABC',
    message_id: 'msg_123',
    connection_state: 'connected',
    qr_available: true,
    status: 'delivered',
    conversation_id: 'conv_1',
    call_status: 'ringing',
    group_id: '1203630@g.us',
    from_lid: '123456789012345@lid',
    restriction: 'restricted',
    restricted_until: '2025-01-31T18:00:00.000Z',
    restriction_signal: 'send_error',
  };
  const out: Record<string, unknown> = { event, ...base };
  for (const f of Object.keys(WEBHOOK_EVENT_FIELDS[event])) out[f] = values[f];
  return out;
}

describe('event catalogue', () => {
  it('has the sixteen events of spec 6.3, each in exactly one group', () => {
    expect(WEBHOOK_EVENT_NAMES).toHaveLength(16);
    const grouped = Object.values(WEBHOOK_EVENT_GROUPS).flat();
    expect([...grouped].sort()).toEqual([...WEBHOOK_EVENT_NAMES].sort());
  });

  it('matches the required/optional table of spec 6.3', () => {
    const table: Record<string, [string[], string[]]> = {
      // from_lid (and a linked id in from), external_message_id on message.failed and reason on
      // instance.qr_updated are optional fields added within v1 (docs/decisions.md).
      'message.received': [['from', 'message_text'], ['message_type', 'external_message_id', 'from_lid']],
      'message.sent': [['to', 'message_purpose'], ['message_id']],
      // Spec 6.3 lists no optional field; message_id is added within v1 (docs/decisions.md).
      'message.failed': [['to', 'message_purpose', 'error'], ['message_id', 'external_message_id']],
      'recipient.opted_out': [['from', 'reason'], ['message_text', 'from_lid']],
      'instance.connected': [[], ['connection_state']],
      'instance.disconnected': [[], ['connection_state']],
      'instance.connection_updated': [[], ['connection_state', 'restriction', 'restricted_until', 'restriction_signal']],
      'instance.qr_updated': [[], ['qr_available', 'reason']],
      'message.delivered': [[], ['from', 'external_message_id', 'status', 'from_lid']],
      'message.read': [[], ['from', 'external_message_id', 'status', 'from_lid']],
      'message.status_updated': [[], ['from', 'external_message_id', 'status', 'from_lid']],
      'conversation.updated': [[], ['conversation_id']],
      'call.received': [[], ['from', 'call_status', 'from_lid']],
      'call.missed': [[], ['from', 'call_status', 'from_lid']],
      'group.message_received': [['group_id'], ['from', 'message_text', 'external_message_id', 'from_lid']],
      'group.updated': [[], ['group_id']],
    };
    for (const e of WEBHOOK_EVENT_NAMES) {
      const spec = WEBHOOK_EVENT_FIELDS[e];
      const req = Object.entries(spec).filter(([, f]) => f.required).map(([k]) => k);
      const opt = Object.entries(spec).filter(([, f]) => !f.required).map(([k]) => k);
      expect([req, opt], e).toEqual(table[e]);
      for (const [k, f] of Object.entries(spec)) expect(f.kind === 'boolean', `${e}.${k}`).toBe(k === 'qr_available');
    }
  });
});

describe('senders known only by a linked id', () => {
  const posted = { instance_id: '42', instance_name: 'Support line', timestamp: '2025-01-31T12:00:00.000Z' };
  const body = (from: string, extra: Record<string, unknown> = {}) => ({ event: 'message.received', ...posted, from, message_text: 'STOP', ...extra });
  it('accept a linked id in from and from_lid, and nothing else that is not a phone', () => {
    expect(validateWebhookEvent(body('123456789012345@lid', { from_lid: '123456789012345@lid' }))).toEqual([]);
    expect(validateWebhookEvent(body('+15551234567', { from_lid: '123456789012345@lid' }))).toEqual([]);
    expect(validateWebhookEvent(body('123456789012345:12@lid')).map((i) => i.rule)).toEqual(['format']);
    expect(validateWebhookEvent(body('+15551234567', { from_lid: '+15551234567' })).map((i) => i.field)).toEqual(['from_lid']);
    expect(validateWebhookEvent({ event: 'message.sent', ...posted, to: '123456789012345@lid', message_purpose: 'support' }).map((i) => i.field)).toEqual(['to']);
  });
});

describe('buildWebhookEvent', () => {
  it('given every event with all its fields, when built, then the body is the exact ordered JSON and parses back', () => {
    for (const e of WEBHOOK_EVENT_NAMES) {
      const built = buildWebhookEvent(fullInput(e) as never);
      const keys = Object.keys(JSON.parse(built.body));
      expect(keys.slice(0, 4)).toEqual(['event', 'instance_id', 'instance_name', 'timestamp']);
      expect(keys.slice(4)).toEqual(Object.keys(WEBHOOK_EVENT_FIELDS[e]));
      expect(parseWebhookEvent(built.body)).toEqual(built.payload);
      expect(validateWebhookEvent(JSON.parse(built.body))).toEqual([]);
    }
  });

  it('given a numeric instance id and a Date, when built, then both are strings in the exact bytes', () => {
    const built = buildWebhookEvent({
      event: 'message.sent',
      instance_id: 42,
      instance_name: 'Support line',
      timestamp: new Date('2025-01-31T12:00:00Z'),
      to: '+15551234567',
      message_purpose: 'transactional',
      message_id: 'msg_1',
    });
    expect(built.body).toBe(
      '{"event":"message.sent","instance_id":"42","instance_name":"Support line","timestamp":"2025-01-31T12:00:00.000Z","to":"+15551234567","message_purpose":"transactional","message_id":"msg_1"}',
    );
  });

  it('given only the required fields, when built, then undefined optionals are omitted', () => {
    const built = buildWebhookEvent({ event: 'instance.qr_updated', ...base, qr_available: false });
    expect(built.payload).toEqual({
      event: 'instance.qr_updated',
      instance_id: '42',
      instance_name: 'Support line',
      timestamp: '2025-01-31T12:00:00.000Z',
      qr_available: false,
    });
    const minimal = buildWebhookEvent({ event: 'instance.connected', ...base, connection_state: undefined });
    expect(Object.keys(minimal.payload)).toEqual(['event', 'instance_id', 'instance_name', 'timestamp']);
  });

  it('given a timestamp with an offset, when built, then it is normalised to UTC', () => {
    const built = buildWebhookEvent({ event: 'group.updated', ...base, timestamp: '2025-01-31T14:00:00+02:00' });
    expect(built.payload.timestamp).toBe('2025-01-31T12:00:00.000Z');
  });

  it('given bad fields, when built, then every problem is reported', () => {
    let caught: unknown;
    try {
      buildWebhookEvent({
        event: 'message.failed',
        instance_id: '',
        instance_name: 'x',
        timestamp: 'yesterday',
        to: '0151 1234',
        message_purpose: 'marketing',
        error: 7 as unknown as string,
        extra: 'nope',
      } as never);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(WebhookPayloadError);
    const issues = (caught as WebhookPayloadError).issues.map((i) => `${i.field}:${i.rule}`);
    expect(issues.sort()).toEqual(
      ['instance_id:format', 'timestamp:format', 'to:format', 'message_purpose:enum', 'error:type', 'extra:unknown_field'].sort(),
    );
  });

  it('given a missing required field or a field of another event, when built, then it is refused', () => {
    expect(() => buildWebhookEvent({ event: 'group.message_received', ...base } as never)).toThrow(/group_id is required/);
    expect(() => buildWebhookEvent({ event: 'message.read', ...base, qr_available: true } as never)).toThrow(
      /qr_available is not a field of message.read/,
    );
    expect(() => buildWebhookEvent({ event: 'instance.qr_updated', ...base, qr_available: 'yes' } as never)).toThrow(
      /qr_available must be a boolean/,
    );
    expect(() => buildWebhookEvent({ event: 'message.exploded', ...base } as never)).toThrow(/event must be one of/);
  });

  it('given a huge body, when built, then it is refused', () => {
    expect(() =>
      buildWebhookEvent({ event: 'message.received', ...base, from: '+15551234567', message_text: 'x'.repeat(300_000) }),
    ).toThrow(/exceeds/);
  });
});

describe('JSON schemas', () => {
  it('are closed objects with the base and event fields', () => {
    const s = webhookEventJsonSchema('message.received') as { required: string[]; additionalProperties: boolean; properties: Record<string, unknown> };
    expect(s.additionalProperties).toBe(false);
    expect(s.required).toEqual(['event', 'instance_id', 'instance_name', 'timestamp', 'from', 'message_text']);
    expect(Object.keys(s.properties)).toContain('external_message_id');
    expect((webhookEventJsonSchema('instance.qr_updated') as { properties: Record<string, { type: string }> }).properties.qr_available!.type).toBe('boolean');
  });
});

describe('resolveSubscription', () => {
  it('given "recommended", then the four recommended events', () => {
    expect(resolveSubscription(['recommended'])).toEqual(['message.received', 'message.sent', 'message.failed', 'recipient.opted_out']);
  });

  it('given "all", then every event in spec order', () => {
    expect(resolveSubscription(['all'])).toEqual([...WEBHOOK_EVENT_NAMES]);
  });

  it('given groups and names with duplicates, then a deduplicated list in spec order', () => {
    expect(resolveSubscription(['call.missed', 'recommended', 'message.sent', 'group', ' call.missed '])).toEqual([
      'message.received',
      'message.sent',
      'message.failed',
      'recipient.opted_out',
      'call.missed',
      'group.message_received',
      'group.updated',
    ]);
  });

  it('given unknown names, then a clear error naming each with a suggestion', () => {
    let caught: unknown;
    try {
      resolveSubscription(['message.sent', 'message.snt', 'bogus']);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(WebhookSubscriptionError);
    const e = caught as WebhookSubscriptionError;
    expect(e.unknown).toEqual(['message.snt', 'bogus']);
    expect(e.message).toContain('"message.snt" (did you mean "message.sent"?)');
    expect(e.message).toContain('"bogus"');
    expect(e.message).toContain('valid values: all, recommended');
  });

  it('given an empty list, then it is refused', () => {
    expect(() => resolveSubscription([])).toThrow(/at least one/);
  });
});

describe('withWebhookId', () => {
  const built = buildWebhookEvent({ event: 'message.sent', instance_id: '7', instance_name: 'Desk', timestamp: '2025-01-31T12:00:00.000Z', to: '+15551234567', message_purpose: 'support' });

  it('appends the delivery id as webhook_id, the stored fields as they were; the result is a valid event', () => {
    const posted = withWebhookId(built.body, 'whd_0123');
    expect(posted).toBe(`${built.body.slice(0, -1)},"webhook_id":"whd_0123"}`);
    expect(parseWebhookEvent(posted)).toMatchObject({ event: 'message.sent', webhook_id: 'whd_0123' });
    expect(withWebhookId(posted, 'whd_0123')).toBe(posted);
    expect(webhookEventJsonSchema('message.sent')).toMatchObject({ properties: { webhook_id: { type: 'string' } } });
    expect((webhookEventJsonSchema('message.sent') as { required: string[] }).required).not.toContain('webhook_id');
  });

  // The short way (no parse, no re-serialisation) must write the bytes the long way writes: the
  // reference below is that long way, applied to bodies buildWebhookEvent makes of awkward text.
  const parsedAndWrittenAgain = (body: string, id: string) => JSON.stringify({ ...JSON.parse(body), webhook_id: id });
  const awkwardTexts = ['plain', 'quote " backslash \\ slash /', 'text naming "webhook_id": "whd_x" as a customer might', '\u2028\u2029 line separators', 'emoji 👋 Grüße 漢字', 'lone \ud800 surrogate', 'tab\tnew\nline\u0001', '}', '{"webhook_id":1}'];

  it('given bodies buildWebhookEvent made, then the bytes a parse and a re-serialisation would write, without parsing', () => {
    const parse = vi.spyOn(JSON, 'parse');
    try {
      for (const text of awkwardTexts) {
        const body = buildWebhookEvent({ event: 'message.received', instance_id: 42, instance_name: 'Desk "1" \\ Ü', timestamp: '2025-01-31T12:00:00.000Z', from: '+15551234567', message_text: text, from_lid: '123456789@lid' }).body;
        const posted = withWebhookId(body, 'whd_00ff');
        parse.mockClear();
        expect(posted).toBe(parsedAndWrittenAgain(body, 'whd_00ff'));
        parse.mockClear();
        withWebhookId(body, 'whd_00ff');
        expect(parse).not.toHaveBeenCalled();
      }
    } finally {
      parse.mockRestore();
    }
  });

  it('given a body that already has a webhook_id, then it is replaced in place (the long way)', () => {
    const posted = withWebhookId(built.body, 'whd_old');
    expect(withWebhookId(posted, 'whd_new')).toBe(parsedAndWrittenAgain(posted, 'whd_new'));
    expect(withWebhookId(posted, 'whd_new')).toBe(`${built.body.slice(0, -1)},"webhook_id":"whd_new"}`);
  });

  it('refuses a webhook_id that is not a token, and posts a body that is not a JSON object as it is', () => {
    expect(validateWebhookEvent({ ...built.payload, webhook_id: '' })).toMatchObject([{ field: 'webhook_id', rule: 'format' }]);
    expect(withWebhookId('not json', 'whd_1')).toBe('not json');
    expect(withWebhookId('[1]', 'whd_1')).toBe('[1]');
  });
});
