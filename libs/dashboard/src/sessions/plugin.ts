// Reads the session cookie on every dashboard request and puts the signed-in account (or null)
// on the request. The cookie holds only the opaque id: HttpOnly, SameSite=Lax, Secure behind
// https, no expiry of its own (the server ends sessions: idle and absolute timeouts).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { Pool } from '@gw/db';
import { findSession, type SessionTimeouts, type SignedIn } from './store.ts';

export const SESSION_COOKIE = 'gw_session';

/**
 * The cookie's name: with Secure cookies (https deployments), `__Host-gw_session`, which a browser
 * accepts only when Secure, Path=/ and without Domain, so no sibling subdomain or plain-http page
 * can set or shadow it. Local runs over http keep the plain name (a browser refuses the prefix
 * without Secure).
 */
export const sessionCookieName = (secure: boolean) => (secure ? `__Host-${SESSION_COOKIE}` : SESSION_COOKIE);

declare module 'fastify' {
  interface FastifyRequest {
    /** The signed-in account, or null. */
    account: SignedIn | null;
    /** The request carried a session that has timed out (the sign-in page says so). */
    sessionEnded: boolean;
  }
}

export interface SessionsOptions {
  pool: Pool;
  timeouts: SessionTimeouts;
  secureCookies: boolean;
  /** Wrong passwords and codes in a row before a lock, and its length (every code check counts). */
  lockout: { after: number; ms: number };
}

export const sessionsPlugin = fp(async (app: FastifyInstance, opts: SessionsOptions) => {
  app.decorateRequest('account', null);
  app.decorateRequest('sessionEnded', false);
  app.addHook('onRequest', async (request: FastifyRequest) => {
    const id = request.cookies[sessionCookieName(opts.secureCookies)];
    if (!id || id.length > 100) return;
    const found = await findSession(opts.pool, id, opts.timeouts);
    if (found.kind === 'live') request.account = { ...found.session, lockout: opts.lockout };
    else if (found.kind === 'expired') request.sessionEnded = true;
  });
}, { name: 'dashboard-sessions', dependencies: ['@fastify/cookie'] });

export function setSessionCookie(reply: FastifyReply, id: string, secure: boolean): void {
  reply.setCookie(sessionCookieName(secure), id, { httpOnly: true, sameSite: 'lax', secure, path: '/' });
}

export function clearSessionCookie(reply: FastifyReply, secure: boolean): void {
  reply.clearCookie(sessionCookieName(secure), { httpOnly: true, sameSite: 'lax', secure, path: '/' });
}
