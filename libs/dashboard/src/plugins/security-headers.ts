// Security headers on every answer (helmet): a strict CSP (only our own scripts, styles and
// images, plus data: images for QR codes), no framing (frame-ancestors 'none'), no referrer
// leaving the site. HSTS only behind https.
//
// helmet itself, its middleware built once at registration: @fastify/helmet 13 calls
// helmet(config) on every request (validating the options and normalising the CSP each time:
// about 6 % of the API's CPU under the send path, issue 28). Nothing here varies per request
// (no CSP nonces), so the headers are the same.
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import helmet, { type HelmetOptions } from 'helmet';

function securityHeaderOptions(https: boolean): HelmetOptions {
  return {
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        defaultSrc: ["'self'"],
        scriptSrc: ["'self'"],
        styleSrc: ["'self'"],
        imgSrc: ["'self'", 'data:'],
        connectSrc: ["'self'"],
        fontSrc: ["'self'"],
        objectSrc: ["'none'"],
        baseUri: ["'none'"],
        formAction: ["'self'"],
        frameAncestors: ["'none'"],
        ...(https ? { upgradeInsecureRequests: [] } : {}),
      },
    },
    referrerPolicy: { policy: 'same-origin' },
    strictTransportSecurity: https ? { maxAge: 31_536_000, includeSubDomains: true } : false,
  };
}

export const securityHeadersPlugin = fp(async (app: FastifyInstance, opts: { https: boolean }) => {
  const setHeaders = helmet(securityHeaderOptions(opts.https));
  // onRequest, as @fastify/helmet did: every answer has them, a 404 or an error too. (A bad
  // option throws here, at registration, not on a request.)
  app.addHook('onRequest', (request, reply, done) => setHeaders(request.raw, reply.raw, (error?: unknown) => done(error as Error | undefined)));
}, { name: 'security-headers' });
