// CSRF: every state-changing dashboard request carries a token (a hidden `_csrf` field, or the
// `x-csrf-token` header) bound to the session: @fastify/csrf-protection with its secret in a
// cookie and the session id as the token's user info, HMAC'd with a key derived from the
// gateway's secret key. A token from before sign-in, or from another session, is refused (403).
import csrfProtection from '@fastify/csrf-protection';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';

export const CSRF_COOKIE = 'gw_csrf';

/** The session a token is bound to: its id's hash, or "anonymous" on the sign-in and sign-up forms. */
export const csrfUserInfo = (request: FastifyRequest) => request.account?.id_hash.toString('hex') ?? 'anonymous';

export const csrfPlugin = fp(async (app: FastifyInstance, opts: { hmacKey: Buffer; secureCookies: boolean }) => {
  await app.register(csrfProtection, {
    sessionPlugin: '@fastify/cookie',
    // `__Host-` on https, as the session cookie (sessions/plugin.ts sessionCookieName).
    cookieKey: opts.secureCookies ? `__Host-${CSRF_COOKIE}` : CSRF_COOKIE,
    cookieOpts: { httpOnly: true, sameSite: 'lax', secure: opts.secureCookies, path: '/', signed: false },
    csrfOpts: { hmacKey: opts.hmacKey, userInfo: true },
    getUserInfo: csrfUserInfo,
  });
  app.addHook('preHandler', (request, reply, done) => {
    if (request.method === 'GET' || request.method === 'HEAD' || request.method === 'OPTIONS') return done();
    app.csrfProtection(request, reply, done);
  });
}, { name: 'dashboard-csrf', dependencies: ['@fastify/cookie'] });
