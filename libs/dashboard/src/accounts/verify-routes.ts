// Proving the address: sign-up mails a single-use link (verify_email token, DASHBOARD_EMAIL_VERIFY_MS);
// following it and confirming marks the user verified and, for a sign-up, creates the organisation
// (its CustomerRegistered fact first, as `gatewayctl customer create`) with the user as owner.
// Until then a signed-in account can do nothing but this page and "send the link again" (the
// guards send every other page here). The link is confirmed with a POST, so a mail scanner that
// fetches links does not use it up.
import type { FastifyInstance } from 'fastify';
import { createCustomer, planChange } from '@gw/accounts';
import { form } from '../forms.ts';
import { securityLog } from '../plugins/security-log.ts';
import { PageError } from '../sessions/guards.ts';
import { setSessionCookie } from '../sessions/plugin.ts';
import { rotateSession } from '../sessions/store.ts';
import { openEmailToken, useEmailToken } from './email-tokens.ts';
import { sendVerification } from './notices.ts';
import { addMembership, markEmailVerified } from '../users.ts';
import type { DashboardDeps } from '../deps.ts';

const TITLE = 'Check your inbox';
const LINK_GONE = new PageError(404, 'Link expired', 'This link has expired or was used already. Sign in to have a new one sent.', { href: '/sign-in', label: 'Sign in' });

/**
 * The user's address is proved (a verification link, or a password reset by mail): marks it, and
 * creates the organisation named at sign-up, if any, with the user as its owner. Null: no such user.
 */
export async function proveAddress(deps: Pick<DashboardDeps, 'pool' | 'appends' | 'settings'>, userId: string): Promise<{ customerId: string | null } | null> {
  const verified = await markEmailVerified(deps.pool, userId);
  if (!verified) return null;
  if (!verified.organisation) return { customerId: null };
  const customer = await createCustomer(deps.pool, deps.appends.facts, verified.organisation);
  const customerId = customer.customer_id;
  // The plan the gateway gives at sign-up, so the setup journey can end in a first send.
  if (deps.settings.signUpPlan !== 'none') await deps.appends.facts.append(planChange(customerId, deps.settings.signUpPlan, { by: verified.email, reason: 'plan given at sign-up' }));
  await addMembership(deps.pool, userId, customerId, 'owner');
  await deps.appends.audit.record({ customerId, action: 'customer.created', subjectId: customerId, by: verified.email, via: 'dashboard', details: { name: customer.name, owner: userId } });
  return { customerId };
}

export async function verifyRoutes(app: FastifyInstance, deps: DashboardDeps): Promise<void> {
  const hours = Math.max(1, Math.round(deps.settings.emailVerifyMs / 3_600_000));

  app.get<{ Querystring: { sent?: string } }>('/verify-email', async (request, reply) => {
    const account = request.account?.stage === 'full' ? request.account : null;
    if (account?.email_verified) return reply.redirect('/account', 303);
    return reply.page('accounts/verify-email', { title: TITLE, pending: account?.email ?? null, sent: request.query.sent === '1', resent: false, hours });
  });

  app.post('/verify-email/resend', { schema: form({}, []), config: { rateLimit: { max: deps.settings.signInPerMinute, timeWindow: 60_000 } } }, async (request, reply) => {
    const account = request.account?.stage === 'full' ? request.account : null;
    if (!account) throw new PageError(401, 'Signed out', 'Sign in first: the link goes to the address of the account you sign in to.', { href: '/sign-in', label: 'Sign in' });
    if (account.email_verified) return reply.redirect('/account', 303);
    await sendVerification(deps, account.user_id, account.email);
    securityLog(request, 'email.verification_sent');
    return reply.page('accounts/verify-email', { title: TITLE, pending: account.email, sent: false, resent: true, hours });
  });

  app.get<{ Params: { token: string } }>('/verify-email/:token', async (request, reply) => {
    if (!(await openEmailToken(deps.pool, request.params.token, 'verify_email'))) throw LINK_GONE;
    return reply.page('accounts/verify-email-confirm', { title: 'Confirm your email address', token: request.params.token });
  });

  app.post<{ Params: { token: string } }>('/verify-email/:token', { schema: form({}, []) }, async (request, reply) => {
    const userId = await useEmailToken(deps.pool, request.params.token, 'verify_email');
    if (!userId) throw LINK_GONE;
    const proved = await proveAddress(deps, userId);
    if (!proved) throw LINK_GONE;
    const customerId = proved.customerId;
    securityLog(request, 'email.verified', { userId, customerId });
    const account = request.account;
    if (account?.user_id === userId && account.stage === 'full') {
      // Signed in in this browser: on to two-factor set-up, under a new session id (now a member).
      setSessionCookie(reply, await rotateSession(deps.pool, account.id_hash, customerId ? { customerId } : {}), deps.settings.secureCookies);
      return reply.redirect(account.mfa_enrolled ? '/instances' : '/account/mfa', 303);
    }
    return reply.redirect(`/sign-in?verified=1&next=${encodeURIComponent('/account/mfa')}`, 303);
  });
}
