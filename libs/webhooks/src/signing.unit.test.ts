import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { buildWebhookEvent } from './events.ts';
import {
  WEBHOOK_HEADERS,
  buildWebhookHeaders,
  deliveryIdFor,
  generateDeliveryId,
  generateSigningSecret,
  sign,
  verifySignature,
} from './signing.ts';

describe('sign', () => {
  it('given a secret, timestamp and body, then equals an independent HMAC-SHA256 over "ts.body"', () => {
    const secret = 'whsec_test_secret';
    const body = '{"event":"message.sent","instance_id":"1","instance_name":"A","timestamp":"2025-01-31T12:00:00.000Z","to":"+15551234567","message_purpose":"support"}';
    const expected = createHmac('sha256', secret).update(`1738324800.${body}`).digest('hex');
    expect(sign(secret, 1738324800, body)).toBe(`sha256=${expected}`);
    expect(sign(secret, 1738324800, Buffer.from(body))).toBe(`sha256=${expected}`);
  });

  it('matches a fixed known-answer vector computed with openssl', () => {
    // printf '%s' '1700000000.{"a":1}' | openssl dgst -sha256 -hmac 'secret'
    expect(sign('secret', 1700000000, '{"a":1}')).toBe('sha256=49f24e537407743fa4a0242bb63b94b9a47ee99cbbe071ccd8a22550ae411686');
  });

  it('covers non-ASCII bodies as UTF-8', () => {
    const body = '{"message_text":"Grüße 👋"}';
    const expected = createHmac('sha256', 'k').update(Buffer.from(`5.${body}`, 'utf8')).digest('hex');
    expect(sign('k', 5, body)).toBe(`sha256=${expected}`);
  });

  it('refuses a fractional timestamp or an empty secret', () => {
    expect(() => sign('k', 1.5, '{}')).toThrow(/integer/);
    expect(() => sign('', 1, '{}')).toThrow(/secret/);
  });
});

describe('verifySignature', () => {
  const secret = generateSigningSecret();
  const body = '{"x":1}';
  const ts = 1_700_000_000;
  const signature = sign(secret, ts, body);

  it('accepts the right signature, with or without the prefix, and with a rotated secret list', () => {
    expect(verifySignature({ secret, timestamp: String(ts), signature, rawBody: body, nowSeconds: ts + 10 })).toEqual({ valid: true });
    expect(verifySignature({ secret, timestamp: String(ts), signature: signature.slice(7), rawBody: body, nowSeconds: ts })).toEqual({ valid: true });
    expect(verifySignature({ secret: ['old', secret], timestamp: String(ts), signature, rawBody: body, nowSeconds: ts }).valid).toBe(true);
  });

  it('refuses a changed body, a wrong secret, a stale timestamp and garbage', () => {
    expect(verifySignature({ secret, timestamp: String(ts), signature, rawBody: '{"x":2}', nowSeconds: ts })).toEqual({ valid: false, reason: 'mismatch' });
    expect(verifySignature({ secret: 'other', timestamp: String(ts), signature, rawBody: body, nowSeconds: ts }).valid).toBe(false);
    expect(verifySignature({ secret, timestamp: String(ts), signature, rawBody: body, nowSeconds: ts + 301 })).toEqual({
      valid: false,
      reason: 'timestamp_out_of_tolerance',
    });
    expect(verifySignature({ secret, timestamp: 'abc', signature, rawBody: body, nowSeconds: ts }).valid).toBe(false);
    expect(verifySignature({ secret, timestamp: String(ts), signature: 'sha256=zz', rawBody: body, nowSeconds: ts })).toEqual({
      valid: false,
      reason: 'malformed_signature',
    });
  });
});

describe('secrets and ids', () => {
  it('generates whsec_ secrets of 32 random bytes, never repeating', () => {
    const secrets = new Set(Array.from({ length: 100 }, generateSigningSecret));
    expect(secrets.size).toBe(100);
    for (const s of secrets) {
      expect(s).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
      expect(Buffer.from(s.slice(6), 'base64url')).toHaveLength(32);
    }
  });

  it('generates unique delivery ids', () => {
    const ids = new Set(Array.from({ length: 100 }, generateDeliveryId));
    expect(ids.size).toBe(100);
    for (const id of ids) expect(id).toMatch(/^whd_[0-9a-f]{32}$/);
  });
});

describe('buildWebhookHeaders', () => {
  const built = buildWebhookEvent({
    event: 'message.received',
    instance_id: '7',
    instance_name: 'Desk',
    timestamp: '2025-01-31T12:00:00.000Z',
    from: '+15551234567',
    message_text: 'hi',
  });

  it('given a secret, then event, timestamp, delivery id and a verifiable signature', () => {
    const headers = buildWebhookHeaders({
      event: built.event,
      deliveryId: 'whd_abc',
      body: built.body,
      timestampSeconds: 1738324800,
      secret: 'whsec_k',
      attempt: 3,
    });
    expect(headers).toMatchObject({
      'Content-Type': 'application/json',
      [WEBHOOK_HEADERS.event]: 'message.received',
      [WEBHOOK_HEADERS.timestamp]: '1738324800',
      [WEBHOOK_HEADERS.delivery]: 'whd_abc',
      [WEBHOOK_HEADERS.attempt]: '3',
    });
    const expected = createHmac('sha256', 'whsec_k').update(`1738324800.${built.body}`).digest('hex');
    expect(headers[WEBHOOK_HEADERS.signature]).toBe(`sha256=${expected}`);
  });

  it('given a retry, then the same delivery id with a fresh timestamp and signature', () => {
    const first = buildWebhookHeaders({ event: built.event, deliveryId: 'whd_same', body: built.body, timestampSeconds: 100, secret: 's' });
    const retry = buildWebhookHeaders({ event: built.event, deliveryId: 'whd_same', body: built.body, timestampSeconds: 405, secret: 's' });
    expect(retry[WEBHOOK_HEADERS.delivery]).toBe(first[WEBHOOK_HEADERS.delivery]);
    expect(retry[WEBHOOK_HEADERS.signature]).not.toBe(first[WEBHOOK_HEADERS.signature]);
  });

  it('given no secret, then no signature header (spec 6.1)', () => {
    const headers = buildWebhookHeaders({ event: built.event, deliveryId: 'whd_x', body: built.body, timestampSeconds: 1 });
    expect(headers[WEBHOOK_HEADERS.signature]).toBeUndefined();
  });

  it('refuses a delivery id that could inject headers', () => {
    expect(() => buildWebhookHeaders({ event: 'e', deliveryId: 'a\r\nX: y', body: '{}', timestampSeconds: 1 })).toThrow(/deliveryId/);
  });
});

describe('deliveryIdFor', () => {
  it('is stable for one event and endpoint, distinct across either, and well-formed', () => {
    const id = deliveryIdFor('evt-1', 'ins_a');
    expect(id).toMatch(/^whd_[0-9a-f]{32}$/);
    expect(deliveryIdFor('evt-1', 'ins_a')).toBe(id);
    expect(deliveryIdFor('evt-2', 'ins_a')).not.toBe(id);
    expect(deliveryIdFor('evt-1', 'ins_b')).not.toBe(id);
  });
});
