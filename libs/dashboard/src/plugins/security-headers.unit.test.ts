import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { securityHeadersPlugin } from './security-headers.ts';

// The headers as @fastify/helmet 13 set them with this configuration (captured before the
// middleware was built once): the same on an answer, an error and a 404.
const CSP = "default-src 'self';script-src 'self';style-src 'self';img-src 'self' data:;connect-src 'self';font-src 'self';object-src 'none';base-uri 'none';form-action 'self';frame-ancestors 'none'";
const COMMON = {
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
  'origin-agent-cluster': '?1',
  'referrer-policy': 'same-origin',
  'x-content-type-options': 'nosniff',
  'x-dns-prefetch-control': 'off',
  'x-download-options': 'noopen',
  'x-frame-options': 'SAMEORIGIN',
  'x-permitted-cross-domain-policies': 'none',
  'x-xss-protection': '0',
};

async function headersOf(https: boolean) {
  const app = Fastify();
  await app.register(securityHeadersPlugin, { https });
  app.get('/ok', async () => ({ ok: true }));
  app.get('/fails', async () => {
    throw new Error('boom');
  });
  try {
    const out: Array<Record<string, unknown>> = [];
    for (const url of ['/ok', '/fails', '/missing', '/ok']) {
      const { date: _date, 'content-type': _type, 'content-length': _length, connection: _connection, ...security } = (await app.inject({ url })).headers;
      out.push(security);
    }
    return out;
  } finally {
    await app.close();
  }
}

describe('security headers', () => {
  it('over http: the strict CSP and the others on every answer, no HSTS', async () => {
    for (const headers of await headersOf(false)) expect(headers).toEqual({ 'content-security-policy': CSP, ...COMMON });
  });

  it('over https: HSTS and upgrade-insecure-requests besides', async () => {
    for (const headers of await headersOf(true)) {
      expect(headers).toEqual({
        'content-security-policy': `${CSP};upgrade-insecure-requests`,
        'strict-transport-security': 'max-age=31536000; includeSubDomains',
        ...COMMON,
      });
    }
  });
});
