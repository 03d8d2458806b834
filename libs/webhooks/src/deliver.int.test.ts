import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliver } from './deliver.ts';
import { buildWebhookEvent } from './events.ts';
import { classifyAttempt, planAfterAttempt } from './retry.ts';
import { WEBHOOK_HEADERS, buildWebhookHeaders, generateSigningSecret, verifySignature } from './signing.ts';
import { WebhookDestinationError, createSsrfGuard, type Resolver } from './ssrf.ts';

// A local receiver on 127.0.0.1. Loopback is blocked by default; tests open it with the allowlist.

interface Received {
  path: string;
  headers: IncomingMessage['headers'];
  body: string;
}

let server: Server;
let base: string;
let port: number;
const received: Received[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = req.url ?? '/';
      received.push({ path, headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      switch (path) {
        case '/ok':
          res.writeHead(200, { 'content-type': 'text/plain' }).end('thanks');
          return;
        case '/fail':
          res.writeHead(500).end('database down');
          return;
        case '/gone':
          res.writeHead(410).end('no such hook');
          return;
        case '/limited':
          res.writeHead(429, { 'retry-after': '30' }).end('slow down');
          return;
        case '/unavailable':
          res.writeHead(503, { 'retry-after': 'Fri, 31 Jan 2099 12:00:00 GMT' }).end();
          return;
        case '/redirect':
          res.writeHead(302, { location: `${base}/ok?redirected=1` }).end();
          return;
        case '/slow':
          setTimeout(() => res.writeHead(200).end('late'), 2_000).unref();
          return;
        case '/big':
          res.writeHead(200).end('é'.repeat(50_000));
          return;
        default:
          res.writeHead(404).end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  base = `http://127.0.0.1:${port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const guard = createSsrfGuard({ allowCidrs: ['127.0.0.0/8'] });
afterAll(() => guard.close());

const event = buildWebhookEvent({
  event: 'message.sent',
  instance_id: 7,
  instance_name: 'Desk',
  timestamp: new Date(),
  to: '+15551234567',
  message_purpose: 'support',
  message_id: 'msg_1',
});
const secret = generateSigningSecret();
const nowSeconds = Math.floor(Date.now() / 1000);
const headers = buildWebhookHeaders({ event: event.event, deliveryId: 'whd_int1', body: event.body, timestampSeconds: nowSeconds, secret, attempt: 1 });

const lastFor = (path: string) => [...received].reverse().find((r) => r.path.startsWith(path));

describe('deliver against a local receiver', () => {
  it('given a 200, then success with the snippet; the receiver can verify the signature', async () => {
    const r = await deliver({ url: `${base}/ok`, body: event.body, headers, guard });
    expect(r).toMatchObject({ status: 200, responseSnippet: 'thanks' });
    expect(r.error).toBeUndefined();
    expect(r.latencyMs).toBeGreaterThanOrEqual(0);
    expect(classifyAttempt(r, new Date())).toEqual({ outcome: 'success' });

    const got = lastFor('/ok')!;
    expect(got.body).toBe(event.body);
    expect(got.headers['x-chat-gateway-event']).toBe('message.sent');
    expect(got.headers['x-chat-gateway-delivery']).toBe('whd_int1');
    expect(got.headers['content-type']).toBe('application/json');
    expect(
      verifySignature({
        secret,
        timestamp: String(got.headers['x-chat-gateway-timestamp']),
        signature: String(got.headers[WEBHOOK_HEADERS.signature.toLowerCase()]),
        rawBody: got.body,
      }),
    ).toEqual({ valid: true });
  });

  it('given a 500, then a retryable server_error', async () => {
    const r = await deliver({ url: `${base}/fail`, body: event.body, headers, guard });
    expect(r).toMatchObject({ status: 500, responseSnippet: 'database down' });
    expect(classifyAttempt(r, new Date())).toMatchObject({ reason: 'server_error', retryable: true });
  });

  it('given a 410, then the endpoint is to be disabled', async () => {
    const r = await deliver({ url: `${base}/gone`, body: event.body, headers, guard });
    expect(r.status).toBe(410);
    expect(planAfterAttempt({ attemptNumber: 1, classification: classifyAttempt(r, new Date()), now: new Date() })).toMatchObject({
      action: 'disable_endpoint',
    });
  });

  it('given a 429 with Retry-After, then the retry is not before it', async () => {
    const now = new Date();
    const r = await deliver({ url: `${base}/limited`, body: event.body, headers, guard });
    expect(r).toMatchObject({ status: 429, retryAfter: '30' });
    const plan = planAfterAttempt({ attemptNumber: 1, classification: classifyAttempt(r, now), now, random: () => 0.5 });
    expect(plan).toEqual({ action: 'retry', attemptNumber: 2, at: new Date(now.getTime() + 30_000) });
  });

  it('given a 503 with a far HTTP-date Retry-After, then it is bounded to 10 h', async () => {
    const now = new Date();
    const r = await deliver({ url: `${base}/unavailable`, body: event.body, headers, guard });
    expect(classifyAttempt(r, now)).toMatchObject({ reason: 'unavailable', retryAfterMs: 10 * 3600_000 });
  });

  it('given a redirect, then it is not followed and counts as a failure', async () => {
    const before = received.filter((x) => x.path.startsWith('/ok?redirected')).length;
    const r = await deliver({ url: `${base}/redirect`, body: event.body, headers, guard });
    expect(r).toMatchObject({ status: 302, location: `${base}/ok?redirected=1` });
    expect(classifyAttempt(r, new Date())).toMatchObject({ reason: 'redirect' });
    expect(received.filter((x) => x.path.startsWith('/ok?redirected')).length).toBe(before);
  });

  it('given a slow receiver, then a timeout at the deadline', async () => {
    const started = Date.now();
    const r = await deliver({ url: `${base}/slow`, body: event.body, headers, guard, timeoutMs: 300 });
    expect(r.status).toBeNull();
    expect(r.error?.code).toBe('timeout');
    expect(Date.now() - started).toBeLessThan(1_500);
    expect(classifyAttempt(r, new Date())).toMatchObject({ reason: 'timeout', retryable: true });
  });

  it('given a large response, then only the first 1 KB is read', async () => {
    const r = await deliver({ url: `${base}/big`, body: event.body, headers, guard });
    expect(r.status).toBe(200);
    expect(Buffer.byteLength(r.responseSnippet.replace(/\uFFFD$/, ''), 'utf8')).toBeLessThanOrEqual(1024);
    expect(r.responseSnippet.startsWith('éé')).toBe(true);
  });

  it('given nothing listening, then connection_refused', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const deadPort = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const r = await deliver({ url: `http://127.0.0.1:${deadPort}/`, body: event.body, headers, guard });
    expect(r).toMatchObject({ status: null, error: { code: 'connection_refused' } });
  });
});

describe('SSRF at connect time', () => {
  it('given no allowlist, when posting to 127.0.0.1, then refused before any connection', async () => {
    const strict = createSsrfGuard();
    const before = received.length;
    const r = await deliver({ url: `${base}/ok`, body: event.body, headers, guard: strict });
    expect(r).toMatchObject({ status: null, error: { code: 'destination_blocked' } });
    expect(r.error?.message).toContain('127.0.0.0/8, loopback');
    // The dispatcher itself refuses too, even if a caller skips validateUrl.
    await expect(request(`${base}/ok`, { method: 'POST', body: '{}', dispatcher: strict.dispatcher })).rejects.toBeInstanceOf(
      WebhookDestinationError,
    );
    expect(received.length).toBe(before);
    await strict.close();
  });

  it('given a host name, then the connection uses the guard resolver and its checked address', async () => {
    const resolver: Resolver = async (host) => (host === 'receiver.test' ? [{ address: '127.0.0.1', family: 4 }] : []);
    const named = createSsrfGuard({ allowCidrs: ['127.0.0.0/8'], resolver });
    const r = await deliver({ url: `http://receiver.test:${port}/ok`, body: event.body, headers, guard: named });
    expect(r.status).toBe(200);
    expect(lastFor('/ok')!.headers.host).toBe(`receiver.test:${port}`);
    await named.close();
  });

  it('given DNS that answers public at check time and private at connect time, then the request is refused', async () => {
    let calls = 0;
    const rebinding: Resolver = async () => {
      calls++;
      return calls === 1 ? [{ address: '93.184.216.34', family: 4 }] : [{ address: '127.0.0.1', family: 4 }];
    };
    const g = createSsrfGuard({ resolver: rebinding });
    const url = `http://rebind.test:${port}/ok`;

    const check = await g.checkDestination(url); // the configuration is accepted...
    expect(check.addresses).toEqual([{ address: '93.184.216.34', family: 4 }]);

    const before = received.length;
    const r = await deliver({ url, body: event.body, headers, guard: g }); // ...but the connect is refused
    expect(calls).toBe(2);
    expect(r).toMatchObject({ status: null, error: { code: 'destination_blocked' } });
    expect(r.error?.message).toContain('rebind.test resolves to 127.0.0.1');
    expect(received.length).toBe(before);
    await g.close();
  });

  it('given DNS that returns a public and a private address, then the connect is refused', async () => {
    const g = createSsrfGuard({
      resolver: async () => [
        { address: '93.184.216.34', family: 4 },
        { address: '127.0.0.1', family: 4 },
      ],
    });
    const r = await deliver({ url: `http://mixed.test:${port}/ok`, body: event.body, headers, guard: g });
    expect(r.error?.code).toBe('destination_blocked');
    await g.close();
  });
});
