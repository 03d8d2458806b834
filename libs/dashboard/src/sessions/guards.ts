// Route guards: who may see a page or send a form. Every dashboard route but the public ones
// takes one, so the role matrix test can walk them all.
import type { FastifyReply, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import { can, MFA_BEFORE_CHANGES, type Permission } from '../roles/permissions.ts';
import type { SignedIn } from './store.ts';

/** An answer the dashboard's error handler renders as a page (never with internals). */
export class PageError extends Error {
  constructor(readonly statusCode: number, readonly title: string, message: string, readonly link?: { href: string; label: string }) {
    super(message);
  }
}

const isRead = (request: FastifyRequest) => request.method === 'GET' || request.method === 'HEAD';

/** The signed-in account with its role, as the guards leave it for the handler. */
export type Member = SignedIn & { customer_id: string; role: NonNullable<SignedIn['role']> };

export const member = (request: FastifyRequest): Member => request.account as Member;

/**
 * Signed in (both factors), a member of the session's customer, and allowed `permission`.
 * A page asked for without a session goes to sign-in (and back after); a form sent without one
 * is refused. Owners and admins change nothing before they have enrolled in MFA.
 */
export function requirePermission(permission: Permission): preHandlerAsyncHookHandler & { permission: Permission } {
  const guard = async function guard(request: FastifyRequest, reply: FastifyReply) {
    const account = request.account;
    if (!account) {
      if (isRead(request)) {
        const next = encodeURIComponent(request.url);
        return reply.redirect(`/sign-in?next=${next}${request.sessionEnded ? '&ended=1' : ''}`, 303);
      }
      throw new PageError(401, 'Signed out', request.sessionEnded ? 'Your session ended. Sign in again, then repeat what you were doing.' : 'Sign in first.', { href: '/sign-in', label: 'Sign in' });
    }
    if (account.stage !== 'full') return reply.redirect('/sign-in/code', 303);
    if (!account.email_verified) return unverified(request, reply);
    if (!account.customer_id || !account.role) throw new PageError(403, 'No organisation', 'Your account belongs to no organisation. Ask its owner for an invitation.');
    if (!can(account.role, permission)) {
      throw new PageError(403, 'Not allowed', `Your role (${account.role}) does not allow this. Ask an owner or admin of ${account.customer_name ?? 'your organisation'}.`);
    }
    if (!isRead(request) && MFA_BEFORE_CHANGES.includes(account.role) && !account.mfa_enrolled) {
      throw new PageError(403, 'Two-factor authentication first', 'As an owner or admin, set up two-factor authentication before you change anything.', { href: '/account/mfa', label: 'Set up two-factor authentication' });
    }
  };
  // The permission stays readable on the guard: the dashboard lists its routes with it (routeGuards).
  return Object.assign(guard, { permission });
}

/** A dashboard route and the permission its guard asks for (null: no permission guard). */
export interface GuardedRoute {
  method: string;
  url: string;
  permission: Permission | null;
}

/** The permission guard among a route's preHandlers, if any. */
export function permissionOf(preHandler: unknown): Permission | null {
  const handlers = Array.isArray(preHandler) ? preHandler : [preHandler];
  const guard = handlers.find((h): h is { permission: Permission } => typeof h === 'function' && 'permission' in h);
  return guard?.permission ?? null;
}

/** Signed in with both factors, whatever the role (the user's own account pages). */
export const requireSignedIn: preHandlerAsyncHookHandler = async function signedIn(request, reply) {
  if (!request.account) {
    if (isRead(request)) return reply.redirect(`/sign-in?next=${encodeURIComponent(request.url)}${request.sessionEnded ? '&ended=1' : ''}`, 303);
    throw new PageError(401, 'Signed out', 'Sign in first.', { href: '/sign-in', label: 'Sign in' });
  }
  if (request.account.stage !== 'full') return reply.redirect('/sign-in/code', 303);
  if (!request.account.email_verified) return unverified(request, reply);
};

/**
 * An account whose address is not proved yet can do nothing but verify it or ask for the link
 * again: every page goes to "check your inbox", every form is refused (403).
 */
async function unverified(request: FastifyRequest, reply: FastifyReply) {
  if (isRead(request)) return reply.redirect('/verify-email', 303);
  throw new PageError(403, 'Confirm your email first', 'Open the link we mailed you to confirm your address; until then your account can do nothing else.', { href: '/verify-email', label: 'Check your inbox' });
}
