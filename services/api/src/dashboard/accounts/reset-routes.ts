// Forgotten passwords: the request page answers the same whether the address has an account (a
// link is mailed only when it has); the link (reset_password token, DASHBOARD_PASSWORD_RESET_MS)
// works once and sets a new password, which ends every session of the user. When two-factor
// authentication is on, it also asks for a code of the second factor (TOTP, each once, or a
// recovery code), counted toward the lockout like a sign-in code, before anything changes: a
// mailbox alone does not take over an account that has a second factor.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Pool } from '@gw/db';
import { mails, type Mailer } from '@gw/mail';
import type { SecretBox } from '@gw/security';
import type { DashboardAppends } from '../appends.ts';
import { EMAIL, form, text } from '../forms.ts';
import { secondFactorMatches } from '../mfa/totp.ts';
import { securityLog } from '../plugins/security-log.ts';
import { PageError } from '../sessions/guards.ts';
import { clearSessionCookie } from '../sessions/plugin.ts';
import { closeAllSessions } from '../sessions/store.ts';
import { issueEmailToken, openEmailToken, useEmailToken } from './email-tokens.ts';
import { absoluteLink, lockedOutNotice } from './notices.ts';
import { hashPassword, PASSWORD_MAX, PASSWORD_MIN, passwordProblem } from './passwords.ts';
import { countAttempt, findUser, findUserByEmail, isLocked, setPassword } from './users.ts';
import { proveAddress } from './verify-routes.ts';

export interface ResetRoutesOptions {
  pool: Pool;
  box: SecretBox;
  appends: DashboardAppends;
  mailer: Mailer;
  publicBaseUrl: string;
  passwordResetMs: number;
  signUpPlan: string;
  lockout: { after: number; ms: number };
  secureCookies: boolean;
  /** Requests and attempts per client address and minute. */
  perMinute: number;
}

const LINK_GONE = new PageError(404, 'Link expired', 'This reset link has expired or was used already. Ask for a new one.', { href: '/forgot-password', label: 'Reset your password' });

export async function resetRoutes(app: FastifyInstance, opts: ResetRoutesOptions): Promise<void> {
  const limited = { rateLimit: { max: opts.perMinute, timeWindow: 60_000 } };
  const minutes = Math.max(1, Math.round(opts.passwordResetMs / 60_000));

  app.get('/forgot-password', async (_request, reply) => reply.page('forgot-password', { title: 'Reset your password', email: '', sent: false, error: null, minutes }));

  app.post<{ Body: { email: string } }>('/forgot-password', { config: limited, schema: form({ email: text(320) }, ['email']), attachValidation: true }, async (request, reply) => {
    const email = (request.body?.email ?? '').trim();
    if (request.validationError || !EMAIL.test(email)) return reply.code(400).page('forgot-password', { title: 'Reset your password', email, sent: false, error: 'Enter an email address.', minutes });
    // The same page whether or not the address has an account; the mail goes in the background.
    const user = await findUserByEmail(opts.pool, email);
    if (user) {
      const token = await issueEmailToken(opts.pool, user.id, 'reset_password', opts.passwordResetMs);
      opts.mailer.deliver(user.email, mails.passwordReset(absoluteLink(opts.publicBaseUrl, `/reset-password/${token}`), opts.passwordResetMs, user.mfa_enrolled_at !== null));
      securityLog(request, 'password.reset_requested', { userId: user.id });
    }
    return reply.page('forgot-password', { title: 'Reset your password', email: '', sent: true, error: null, minutes });
  });

  const userOfLink = async (token: string) => {
    const userId = await openEmailToken(opts.pool, token, 'reset_password');
    const user = userId ? await findUser(opts.pool, userId) : null;
    if (!user) throw LINK_GONE;
    return user;
  };
  const resetPage = (token: string, mfa: boolean, error: string | null) => ({ title: 'Choose a new password', token, mfa, min: PASSWORD_MIN, error });

  app.get<{ Params: { token: string } }>('/reset-password/:token', async (request, reply) => {
    const user = await userOfLink(request.params.token);
    return reply.page('reset-password', resetPage(request.params.token, user.mfa_enrolled_at !== null, null));
  });

  app.post<{ Params: { token: string }; Body: { password: string; code?: string } }>(
    '/reset-password/:token',
    { config: limited, schema: form({ password: text(PASSWORD_MAX), code: text(40) }, ['password']), attachValidation: true },
    async (request, reply) => {
      const token = request.params.token;
      const user = await userOfLink(token);
      const mfa = user.mfa_enrolled_at !== null;
      const again = (status: number, error: string) => reply.code(status).page('reset-password', resetPage(token, mfa, error));
      const weak = request.validationError ? 'Enter a new password.' : passwordProblem(request.body.password);
      if (weak) return again(400, weak);
      if (mfa && !(await secondFactorPasses(request, user.id))) {
        return again(400, 'That code is not right. Enter the current code from your authenticator app, or one of your recovery codes. Wrong codes count toward the lockout.');
      }
      // Used up only now, once everything else passed: a wrong code leaves the link working.
      if ((await useEmailToken(opts.pool, token, 'reset_password')) !== user.id) throw LINK_GONE;
      await setPassword(opts.pool, user.id, await hashPassword(request.body.password));
      // The reset went through the mailbox: the address is proved too.
      await proveAddress(opts, user.id);
      const ended = await closeAllSessions(opts.pool, user.id);
      clearSessionCookie(reply, opts.secureCookies);
      securityLog(request, 'password.reset', { userId: user.id, details: { sessions_ended: ended, second_factor: mfa } });
      opts.mailer.deliver(user.email, mails.passwordChanged('reset'));
      return reply.redirect('/sign-in?reset=1', 303);
    },
  );

  /** A code of the user's second factor, counted toward the lockout before it is checked. */
  async function secondFactorPasses(request: FastifyRequest, userId: string): Promise<boolean> {
    const attempt = await countAttempt(opts.pool, { userId }, opts.lockout);
    if (!attempt) throw LINK_GONE;
    if (!attempt.allowed) throw new PageError(429, 'Account locked', 'Too many wrong passwords or codes in a row: this account is locked for a while. Try the link again later.');
    const code = (request.body as { code?: string }).code ?? '';
    const passes = code.trim() !== '' && (await secondFactorMatches(opts.pool, opts.box, attempt.user, code));
    if (!passes) {
      securityLog(request, 'second_factor.failed', { userId, status: 400, reason: 'password reset' });
      if (isLocked(attempt.user)) lockedOutNotice(request, { ...opts, lockoutMs: opts.lockout.ms }, attempt.user);
    }
    return passes;
  }
}
