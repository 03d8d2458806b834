// Sign-up, sign-in (password, then a TOTP code once enrolled), sign-out and sign-out everywhere.
// Sign-up makes an unverified user and mails a link; following it creates the customer (the
// organisation) with the user as its owner (verify-routes.ts). Wrong passwords and codes count
// towards a lockout; both forms are rate-limited per client address as well.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { mails } from '@gw/mail';
import { absoluteLink, lockedOutNotice, sendVerification } from './notices.ts';
import { secondFactorMatches } from '../mfa/totp.ts';
import { clearSessionCookie, setSessionCookie } from '../sessions/plugin.ts';
import { closeAllSessions, closeSession, openSession, rotateSession } from '../sessions/store.ts';
import { requireSignedIn } from '../sessions/guards.ts';
import { hashPassword, PASSWORD_MAX, PASSWORD_MIN, passwordMatches, passwordProblem } from './passwords.ts';
import { clearFailures, countAttempt, createUser, EmailTaken, findUserByEmail, firstMembership, isLocked } from '../users.ts';
import { securityLog } from '../plugins/security-log.ts';
import { EMAIL, form, text } from '../forms.ts';
import { lockoutOf, type DashboardDeps } from '../deps.ts';

/** Where to go after signing in: a path on this site only (never another origin). */
const safeNext = (next: unknown) => (typeof next === 'string' && /^\/(?![/\\])[^\s]*$/.test(next) && next.length < 500 ? next : '/instances');

const minutes = (ms: number) => Math.max(1, Math.ceil(ms / 60_000));

export async function accountRoutes(app: FastifyInstance, deps: DashboardDeps): Promise<void> {
  const link = (path: string) => absoluteLink(deps.publicBaseUrl, path);
  // One answer for a wrong password, a locked account and an unknown address (no enumeration).
  const wrongOrLocked = `The email or password is wrong, or the account is locked after ${deps.settings.lockoutAfter} wrong attempts in a row (for ${minutes(deps.settings.lockoutMs)} minute(s)).`;
  /** The attempt that locked the account: a security line and a mail to its owner. */
  const lockedOut = (request: FastifyRequest, user: { id: string; email: string }) => lockedOutNotice(request, deps, user);
  const limited = { rateLimit: { max: deps.settings.signInPerMinute, timeWindow: 60_000 } };
  const signedIn = async (reply: FastifyReply, id: string, next: string) => {
    setSessionCookie(reply, id, deps.settings.secureCookies);
    return reply.redirect(next, 303);
  };

  app.get('/sign-up', async (_request, reply) => reply.page('accounts/sign-up', { title: 'Create an account', values: {}, errors: {}, min: PASSWORD_MIN }));

  app.post<{ Body: { organisation: string; email: string; password: string } }>(
    '/sign-up',
    { config: limited, schema: form({ organisation: text(200), email: text(320), password: text(PASSWORD_MAX) }, ['organisation', 'email', 'password']), attachValidation: true },
    async (request, reply) => {
      const body = (request.body ?? {}) as Partial<Record<'organisation' | 'email' | 'password', string>>;
      const values = { organisation: body.organisation ?? '', email: body.email ?? '' };
      const errors: Record<string, string> = {};
      if (!values.organisation.trim()) errors.organisation = 'Give your organisation a name.';
      if (!EMAIL.test(values.email.trim())) errors.email = 'Enter an email address.';
      const weak = passwordProblem(body.password ?? '');
      if (weak) errors.password = weak;
      if (request.validationError || Object.keys(errors).length > 0) {
        return reply.code(400).page('accounts/sign-up', { title: 'Create an account', values, errors: Object.keys(errors).length ? errors : { form: 'Check the form.' }, min: PASSWORD_MIN });
      }
      // The SAME answer, at the same cost (an argon2 hash and a mail sent in the background), for
      // a new address and one that has an account: the page never says which. The owner of a
      // taken address gets a notice instead of a link; nothing is created for it.
      const passwordHash = await hashPassword(body.password!);
      const email = values.email.trim();
      const existing = await findUserByEmail(deps.pool, email);
      if (existing) {
        securityLog(request, 'sign_up.address_taken', { userId: existing.id });
        deps.mailer.deliver(existing.email, mails.signUpAttempt(link('/sign-in'), link('/forgot-password')));
        return reply.redirect('/verify-email?sent=1', 303);
      }
      let userId: string;
      try {
        // The organisation is created when the address is proved (verify-routes.ts): an unproved
        // address makes no customer, no fact and no plan.
        userId = await createUser(deps.pool, email, passwordHash, { signUpOrganisation: values.organisation.trim() });
      } catch (error) {
        if (!(error instanceof EmailTaken)) throw error;
        return reply.redirect('/verify-email?sent=1', 303);
      }
      await sendVerification(deps, userId, email);
      securityLog(request, 'sign_up.started', { userId });
      return reply.redirect('/verify-email?sent=1', 303);
    },
  );

  app.get<{ Querystring: { next?: string; ended?: string; signed_out?: string; verified?: string; reset?: string } }>('/sign-in', async (request, reply) => {
    const q = request.query as Record<string, string | undefined>;
    const notice = q.ended ? 'Your session ended. Sign in again.' : q.signed_out ? 'You are signed out.' : q.verified ? 'Your email address is confirmed. Sign in to continue.' : q.reset ? 'Your password is changed and every session ended. Sign in with the new password.' : null;
    return reply.page('accounts/sign-in', { title: 'Sign in', next: safeNext(request.query.next), email: '', error: null, notice });
  });

  app.post<{ Body: { email: string; password: string; next?: string } }>(
    '/sign-in',
    { config: limited, schema: form({ email: text(320), password: text(PASSWORD_MAX), next: text(500) }, ['email', 'password']), attachValidation: true },
    async (request, reply) => {
      const body = (request.body ?? {}) as Partial<Record<'email' | 'password' | 'next', string>>;
      const next = safeNext(body.next);
      const refuse = (status: number, error: string) => reply.code(status).page('accounts/sign-in', { title: 'Sign in', next, email: body.email ?? '', error, notice: null });
      if (request.validationError) return refuse(400, 'Enter your email and password.');
      // Counted before the slow password check (parallel guesses each see the others), and the
      // same answer, at the same cost, for a wrong password, a locked account and an unknown
      // address: none of them says whether the address has an account.
      const attempt = await countAttempt(deps.pool, { email: body.email ?? '' }, lockoutOf(deps.settings));
      const matches = await passwordMatches(body.password ?? '', attempt?.allowed ? attempt.user.password_hash : null);
      if (!attempt || !attempt.allowed || !matches) {
        if (attempt && !attempt.allowed) securityLog(request, 'sign_in.locked', { userId: attempt.user.id, status: 401 });
        else securityLog(request, 'sign_in.failed', { userId: attempt?.user.id ?? null, status: 401, reason: attempt ? 'wrong password' : 'unknown address' });
        if (attempt?.allowed && isLocked(attempt.user)) lockedOut(request, attempt.user);
        return refuse(401, wrongOrLocked);
      }
      const user = attempt.user;
      // A session that was open in this browser ends: the new one gets a new id.
      if (request.account) await closeSession(deps.pool, request.account.id_hash);
      const membership = await firstMembership(deps.pool, user.id);
      if (user.mfa_enrolled_at) {
        // The count stays until the code step passes: a known password does not reset code guessing.
        const id = await openSession(deps.pool, { userId: user.id, customerId: membership?.customer_id ?? null, stage: 'password', mfaAt: null, userAgent: request.headers['user-agent'] });
        setSessionCookie(reply, id, deps.settings.secureCookies);
        return reply.redirect(`/sign-in/code?next=${encodeURIComponent(next)}`, 303);
      }
      await clearFailures(deps.pool, user.id);
      securityLog(request, 'sign_in.succeeded', { userId: user.id, customerId: membership?.customer_id ?? null, details: { second_factor: false } });
      const id = await openSession(deps.pool, { userId: user.id, customerId: membership?.customer_id ?? null, stage: 'full', mfaAt: null, userAgent: request.headers['user-agent'] });
      return signedIn(reply, id, next);
    },
  );

  app.get<{ Querystring: { next?: string } }>('/sign-in/code', async (request, reply) => {
    if (!request.account) return reply.redirect('/sign-in', 303);
    if (request.account.stage === 'full') return reply.redirect(safeNext(request.query.next), 303);
    return reply.page('accounts/sign-in-code', { title: 'Enter your code', next: safeNext(request.query.next), error: null });
  });

  app.post<{ Body: { code: string; next?: string } }>(
    '/sign-in/code',
    { config: limited, schema: form({ code: text(40), next: text(500) }, ['code']), attachValidation: true },
    async (request, reply) => {
      const account = request.account;
      if (!account) return reply.redirect('/sign-in', 303);
      const next = safeNext(request.body?.next);
      const attempt = await countAttempt(deps.pool, { userId: account.user_id }, lockoutOf(deps.settings));
      if (!attempt || !attempt.allowed) {
        securityLog(request, 'sign_in.locked', { userId: account.user_id, status: 429 });
        await closeSession(deps.pool, account.id_hash);
        clearSessionCookie(reply, deps.settings.secureCookies);
        return reply.code(429).page('accounts/sign-in', { title: 'Sign in', next, email: '', error: 'Too many wrong attempts. This account is locked for a while.', notice: null });
      }
      const user = attempt.user;
      if (request.validationError || !(await secondFactorMatches(deps.pool, deps.box, user, request.body.code))) {
        securityLog(request, 'second_factor.failed', { userId: user.id, status: 401, reason: 'sign-in code' });
        if (isLocked(user)) lockedOut(request, user);
        return reply.code(401).page('accounts/sign-in-code', { title: 'Enter your code', next, error: 'That code is not right. Use the current code from your authenticator app, or a recovery code.' });
      }
      await clearFailures(deps.pool, user.id);
      securityLog(request, 'sign_in.succeeded', { userId: user.id, customerId: account.customer_id, details: { second_factor: true } });
      const id = await rotateSession(deps.pool, account.id_hash, { stage: 'full', mfaAt: new Date() });
      return signedIn(reply, id, next);
    },
  );

  app.post('/sign-out', { schema: form({}, []) }, async (request: FastifyRequest, reply) => {
    if (request.account) await closeSession(deps.pool, request.account.id_hash);
    clearSessionCookie(reply, deps.settings.secureCookies);
    return reply.redirect('/sign-in?signed_out=1', 303);
  });

  app.post('/account/sign-out-everywhere', { preHandler: requireSignedIn, schema: form({}, []) }, async (request, reply) => {
    await closeAllSessions(deps.pool, request.account!.user_id);
    clearSessionCookie(reply, deps.settings.secureCookies);
    return reply.redirect('/sign-in?signed_out=1', 303);
  });
}
