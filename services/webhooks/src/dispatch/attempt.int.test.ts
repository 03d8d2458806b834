import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  buildWebhookEvent,
  createRetryPolicy,
  createSsrfGuard,
  deliveryIdFor,
  generateSigningSecret,
  parseWebhookEvent,
  standardWebhooksSecret,
  verifySignature,
  WEBHOOK_HEADERS,
  type StoredSigningSecrets,
} from '@gw/webhooks';
import { attemptDelivery } from './attempt.ts';
import type { ClaimedDelivery } from './claims.ts';

// The worker's attempt against a local receiver on 127.0.0.1, checked as a customer's receiver
// would: with the npm package standardwebhooks (the reference library of
// github.com/standard-webhooks/standard-webhooks) and with the contract's X-Chat-Gateway-Signature.

interface Captured {
  headers: IncomingHttpHeaders;
  body: string;
}

let server: Server;
let url: string;
const captured: Captured[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      captured.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const guard = createSsrfGuard({ allowCidrs: ['127.0.0.0/8'] });
afterAll(() => guard.close());
const policy = createRetryPolicy({ delaysMs: [0, 1000], jitterRatio: 0 });

const event = buildWebhookEvent({ event: 'message.sent', instance_id: 'ins_att', instance_name: 'Desk', timestamp: new Date(), to: '+15551234567', message_purpose: 'support', message_id: 'msg_1' });
const deliveryId = deliveryIdFor('evt-attempt-1', 'ins_att');

function claim(): ClaimedDelivery {
  return {
    deliveryId,
    instanceId: 'ins_att',
    event: event.event,
    body: event.body,
    attempt: 1,
    roundAttempt: 1,
    destinationUrl: url,
    signingSecretEnc: 'current',
    previousSigningSecretEnc: null,
    previousSecretExpiresAt: null,
    endpointFailing: false,
    traceParent: null,
  };
}

/** One attempt at `nowMs` (the worker's clock), signed with `secrets`; what the receiver got. */
async function postAt(nowMs: number, secrets: StoredSigningSecrets): Promise<Captured> {
  const before = captured.length;
  const record = await attemptDelivery(claim(), { guard, policy, now: () => nowMs, secretsFor: () => secrets });
  expect(record.result.status).toBe(200);
  expect(captured).toHaveLength(before + 1);
  return captured.at(-1)!;
}

const headersOf = (got: Captured) => Object.fromEntries(Object.entries(got.headers).map(([k, v]) => [k, String(v)]));

describe('a delivery as a receiver verifies it', () => {
  const secret = generateSigningSecret();

  it('verifies with standardwebhooks; the body carries the delivery id as webhook_id; the contract header verifies too', async () => {
    const now = Date.now();
    const got = await postAt(now, { current: secret, previous: null, previousExpiresAt: null });
    expect(got.headers['webhook-id']).toBe(deliveryId);
    expect(got.headers['x-chat-gateway-delivery']).toBe(deliveryId);
    expect(got.headers['webhook-timestamp']).toBe(String(Math.floor(now / 1000)));

    const verified = new Webhook(standardWebhooksSecret(secret)).verify(got.body, headersOf(got));
    expect(verified).toEqual({ ...event.payload, webhook_id: deliveryId });
    expect(parseWebhookEvent(got.body)).toMatchObject({ webhook_id: deliveryId });
    const legacy = { secret, timestamp: String(got.headers['x-chat-gateway-timestamp']), signature: String(got.headers[WEBHOOK_HEADERS.signature.toLowerCase()]), rawBody: got.body };
    expect(verifySignature(legacy)).toEqual({ valid: true });
  });

  it('given the captured delivery replayed under another id, or with a changed body, then standardwebhooks refuses it', async () => {
    const got = await postAt(Date.now(), { current: secret, previous: null, previousExpiresAt: null });
    const receiver = new Webhook(standardWebhooksSecret(secret));
    const replayed = { ...headersOf(got), 'webhook-id': deliveryIdFor('evt-attempt-2', 'ins_att') };
    expect(() => receiver.verify(got.body, replayed)).toThrow(/No matching signature/);
    const tampered = got.body.replace('"support"', '"authentication"');
    expect(tampered).not.toBe(got.body);
    expect(() => receiver.verify(tampered, headersOf(got))).toThrow(/No matching signature/);
    expect(() => new Webhook(standardWebhooksSecret(generateSigningSecret())).verify(got.body, headersOf(got))).toThrow(/No matching signature/);
  });

  it('during a rotation overlap a receiver holding either secret verifies; once it ended, only the new one does', async () => {
    const oldSecret = generateSigningSecret();
    const newSecret = generateSigningSecret();
    const now = Date.now();
    const withOld = new Webhook(standardWebhooksSecret(oldSecret));
    const withNew = new Webhook(standardWebhooksSecret(newSecret));

    const during = await postAt(now, { current: newSecret, previous: oldSecret, previousExpiresAt: now + 3_600_000 });
    expect(String(during.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(withOld.verify(during.body, headersOf(during))).toMatchObject({ webhook_id: deliveryId });
    expect(withNew.verify(during.body, headersOf(during))).toMatchObject({ webhook_id: deliveryId });
    // The contract's single signature is the old secret's: a receiver that has not switched keeps working.
    const legacy = (got: Captured, s: string) =>
      verifySignature({ secret: s, timestamp: String(got.headers['x-chat-gateway-timestamp']), signature: String(got.headers['x-chat-gateway-signature']), rawBody: got.body }).valid;
    expect(legacy(during, oldSecret)).toBe(true);

    const after = await postAt(now, { current: newSecret, previous: oldSecret, previousExpiresAt: now });
    expect(String(after.headers['webhook-signature']).split(' ')).toHaveLength(1);
    expect(() => withOld.verify(after.body, headersOf(after))).toThrow(/No matching signature/);
    expect(withNew.verify(after.body, headersOf(after))).toMatchObject({ webhook_id: deliveryId });
    expect(legacy(after, oldSecret)).toBe(false);
    expect(legacy(after, newSecret)).toBe(true);
  });
});
