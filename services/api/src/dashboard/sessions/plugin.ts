// Reads the session cookie on every dashboard request and puts the signed-in account (or null)
// on the request. The cookie holds only the opaque id: HttpOnly, SameSite=Lax, Secure behind
// https, no expiry of its own (the server ends sessions: idle and absolute timeouts).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { Pool } from '@gw/db';
import { findSession, type SessionTimeouts, type SignedIn } from './store.ts';

export const SESSION_COOKIE = 'gw_session';

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
}

export const sessionsPlugin = fp(async (app: FastifyInstance, opts: SessionsOptions) => {
  app.decorateRequest('account', null);
  app.decorateRequest('sessionEnded', false);
  app.addHook('onRequest', async (request: FastifyRequest) => {
    const id = request.cookies[SESSION_COOKIE];
    if (!id || id.length > 100) return;
    const found = await findSession(opts.pool, id, opts.timeouts);
    if (found.kind === 'live') request.account = found.session;
    else if (found.kind === 'expired') request.sessionEnded = true;
  });
}, { name: 'dashboard-sessions', dependencies: ['@fastify/cookie'] });

export function setSessionCookie(reply: FastifyReply, id: string, secure: boolean): void {
  reply.setCookie(SESSION_COOKIE, id, { httpOnly: true, sameSite: 'lax', secure, path: '/' });
}

export function clearSessionCookie(reply: FastifyReply, secure: boolean): void {
  reply.clearCookie(SESSION_COOKIE, { httpOnly: true, sameSite: 'lax', secure, path: '/' });
}
