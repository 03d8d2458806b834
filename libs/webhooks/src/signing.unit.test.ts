import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { buildWebhookEvent } from './events.ts';
import { signingSecretsAt } from './rotation.ts';
import {
  STANDARD_WEBHOOK_HEADERS,
  WEBHOOK_HEADERS,
  buildWebhookHeaders,
  deliveryIdFor,
  generateDeliveryId,
  generateSigningSecret,
  sign,
  signStandard,
  signingKey,
  standardWebhooksKey,
  standardWebhooksSecret,
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

const SECRET = generateSigningSecret();

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
      secret: SECRET,
      attempt: 3,
    });
    expect(headers).toMatchObject({
      'Content-Type': 'application/json',
      [WEBHOOK_HEADERS.event]: 'message.received',
      [WEBHOOK_HEADERS.timestamp]: '1738324800',
      [WEBHOOK_HEADERS.delivery]: 'whd_abc',
      [WEBHOOK_HEADERS.attempt]: '3',
    });
    const expected = createHmac('sha256', SECRET).update(`1738324800.${built.body}`).digest('hex');
    expect(headers[WEBHOOK_HEADERS.signature]).toBe(`sha256=${expected}`);
  });

  it('given a retry, then the same delivery id with a fresh timestamp and signature', () => {
    const first = buildWebhookHeaders({ event: built.event, deliveryId: 'whd_same', body: built.body, timestampSeconds: 100, secret: SECRET });
    const retry = buildWebhookHeaders({ event: built.event, deliveryId: 'whd_same', body: built.body, timestampSeconds: 405, secret: SECRET });
    expect(retry[WEBHOOK_HEADERS.delivery]).toBe(first[WEBHOOK_HEADERS.delivery]);
    expect(retry[WEBHOOK_HEADERS.signature]).not.toBe(first[WEBHOOK_HEADERS.signature]);
  });

  it('given no secret, then no signature header (spec 6.1)', () => {
    const headers = buildWebhookHeaders({ event: built.event, deliveryId: 'whd_x', body: built.body, timestampSeconds: 1 });
    expect(headers[WEBHOOK_HEADERS.signature]).toBeUndefined();
    expect(headers[STANDARD_WEBHOOK_HEADERS.signature]).toBeUndefined();
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

describe('Standard Webhooks signing', () => {
  it('matches the known-answer vector of the reference library (standard-webhooks libraries/javascript/src/webhook.test.ts, "sign function works")', () => {
    expect(signStandard('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, '{"test": 2432232314}')).toBe(
      'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
    );
  });

  it('keys the HMAC with the 32 bytes our base64url secret encodes; the standard form is the same bytes in base64', () => {
    const secret = generateSigningSecret();
    const bytes = Buffer.from(secret.slice('whsec_'.length), 'base64url');
    expect(standardWebhooksKey(secret)).toEqual(bytes);
    expect(standardWebhooksSecret(secret)).toBe(`whsec_${bytes.toString('base64')}`);
    const expected = createHmac('sha256', bytes).update('whd_1.1700000000.{"a":1}').digest('base64');
    expect(signStandard(secret, 'whd_1', 1700000000, '{"a":1}')).toBe(`v1,${expected}`);
    // The library, given the standard form, signs exactly as we do.
    expect(new Webhook(standardWebhooksSecret(secret)).sign('whd_1', new Date(1700000000_000), '{"a":1}')).toBe(`v1,${expected}`);
  });

  it('refuses a secret that does not encode 24 to 64 bytes, and an id that could break the "id.timestamp.body" framing', () => {
    for (const bad of ['whsec_k', 'not-a-secret', `whsec_${Buffer.alloc(65).toString('base64url')}`, 'whsec_!!!!']) expect(() => standardWebhooksKey(bad)).toThrow(/24-64 bytes/);
    expect(() => signStandard(SECRET, 'whd.1', 1, '{}')).toThrow(/deliveryId/);
  });

  it('sends webhook-id (the delivery id), webhook-timestamp and a webhook-signature the standardwebhooks package verifies', () => {
    const now = Math.floor(Date.now() / 1000);
    const body = '{"event":"message.sent","webhook_id":"whd_std"}';
    const headers = buildWebhookHeaders({ event: 'message.sent', deliveryId: 'whd_std', body, timestampSeconds: now, secret: SECRET });
    expect(headers).toMatchObject({ 'webhook-id': 'whd_std', 'webhook-timestamp': String(now), [WEBHOOK_HEADERS.delivery]: 'whd_std', [WEBHOOK_HEADERS.timestamp]: String(now) });
    expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    const receiver = new Webhook(standardWebhooksSecret(SECRET));
    expect(receiver.verify(body, headers)).toEqual({ event: 'message.sent', webhook_id: 'whd_std' });
    // The contract's header is unchanged: sha256=<hex> over "timestamp.body", keyed with the secret as text.
    expect(headers[WEBHOOK_HEADERS.signature]).toBe(sign(SECRET, now, body));
  });

  it('given a replay under another delivery id, or a changed body, then the standard signature does not verify (the contract header alone would not notice the id)', () => {
    const now = Math.floor(Date.now() / 1000);
    const body = '{"event":"message.sent"}';
    const headers = buildWebhookHeaders({ event: 'message.sent', deliveryId: 'whd_original', body, timestampSeconds: now, secret: SECRET });
    const receiver = new Webhook(standardWebhooksSecret(SECRET));
    const replayed: Record<string, string> = { ...headers, 'webhook-id': 'whd_replayed', [WEBHOOK_HEADERS.delivery]: 'whd_replayed' };
    expect(() => receiver.verify(body, replayed)).toThrow(/No matching signature/);
    expect(verifySignature({ secret: SECRET, timestamp: String(now), signature: replayed[WEBHOOK_HEADERS.signature]!, rawBody: body }).valid).toBe(true);
    expect(() => receiver.verify('{"event":"message.failed"}', headers)).toThrow(/No matching signature/);
  });
});

describe('rotation overlap', () => {
  const oldSecret = generateSigningSecret();
  const newSecret = generateSigningSecret();
  const rotatedAt = 1_700_000_000_000;
  const stored = { current: newSecret, previous: oldSecret, previousExpiresAt: rotatedAt + 24 * 3_600_000 };

  it('during the overlap both secrets sign; from its end on, only the new one', () => {
    expect(signingSecretsAt(stored, rotatedAt + 1_000)).toEqual({ current: newSecret, previous: oldSecret });
    expect(signingSecretsAt(stored, stored.previousExpiresAt - 1)).toEqual({ current: newSecret, previous: oldSecret });
    expect(signingSecretsAt(stored, stored.previousExpiresAt)).toEqual({ current: newSecret });
    expect(signingSecretsAt({ current: newSecret, previous: null, previousExpiresAt: null }, rotatedAt)).toEqual({ current: newSecret });
  });

  it('during the overlap webhook-signature carries both v1 signatures and X-Chat-Gateway-Signature the old one; after it, the new one only', () => {
    const body = '{"event":"message.sent"}';
    const at = (nowMs: number) => {
      const timestampSeconds = Math.floor(nowMs / 1000);
      return { timestampSeconds, headers: buildWebhookHeaders({ event: 'message.sent', deliveryId: 'whd_rot', body, timestampSeconds, secret: signingSecretsAt(stored, nowMs) }) };
    };
    const during = at(rotatedAt + 3_600_000);
    expect(during.headers['webhook-signature']).toBe(
      `${signStandard(newSecret, 'whd_rot', during.timestampSeconds, body)} ${signStandard(oldSecret, 'whd_rot', during.timestampSeconds, body)}`,
    );
    expect(during.headers[WEBHOOK_HEADERS.signature]).toBe(sign(oldSecret, during.timestampSeconds, body));

    const after = at(stored.previousExpiresAt + 1_000);
    expect(after.headers['webhook-signature']).toBe(signStandard(newSecret, 'whd_rot', after.timestampSeconds, body));
    expect(after.headers[WEBHOOK_HEADERS.signature]).toBe(sign(newSecret, after.timestampSeconds, body));
  });
});

describe('signingKey (keys derived once per secret)', () => {
  const body = '{"event":"message.sent","instance_id":"7","note":"Grüße 👋","webhook_id":"whd_keys"}';
  const now = Math.floor(Date.now() / 1000);

  it('given keys instead of the secrets, then the very same headers, byte for byte, which the standardwebhooks package verifies', () => {
    const oldSecret = generateSigningSecret();
    const newSecret = generateSigningSecret();
    for (const [texts, keys] of [
      [{ current: newSecret }, { current: signingKey(newSecret) }],
      [{ current: newSecret, previous: oldSecret }, { current: signingKey(newSecret), previous: signingKey(oldSecret) }],
    ] as const) {
      const input = { event: 'message.sent', deliveryId: 'whd_keys', body, timestampSeconds: now, attempt: 2 };
      const fromKeys = buildWebhookHeaders({ ...input, secret: keys });
      expect(fromKeys).toEqual(buildWebhookHeaders({ ...input, secret: texts }));
      for (const secret of [texts.current, ...('previous' in texts ? [texts.previous] : [])]) {
        expect(new Webhook(standardWebhooksSecret(secret)).verify(body, fromKeys)).toMatchObject({ webhook_id: 'whd_keys' });
      }
      expect(fromKeys[WEBHOOK_HEADERS.signature]).toBe(sign('previous' in texts ? texts.previous : texts.current, now, body));
    }
  });

  it('refuses what signing refuses: an empty secret, or one that does not encode 24 to 64 bytes', () => {
    expect(() => signingKey('')).toThrow(/secret/);
    expect(() => signingKey('whsec_short')).toThrow(/24-64 bytes/);
  });
});
