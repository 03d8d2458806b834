// Forgotten passwords: the request page answers the same whether the address has an account (a
// link is mailed only when it has); the link (reset_password token, DASHBOARD_PASSWORD_RESET_MS)
// works once and sets a new password, which ends every session of the user. When two-factor
// authentication is on, it also asks for a code of the second factor (TOTP, each once, or a
// recovery code), counted toward the lockout like a sign-in code, before anything changes: a
// mailbox alone does not take over an account that has a second factor.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { mails } from '@gw/mail';
import { EMAIL, form, text } from '../forms.ts';
import { secondFactorMatches } from '../mfa/totp.ts';
import { securityLog } from '../plugins/security-log.ts';
import { PageError } from '../sessions/guards.ts';
import { clearSessionCookie } from '../sessions/plugin.ts';
import { closeAllSessions } from '../sessions/store.ts';
import { issueEmailToken, openEmailToken, useEmailToken } from './email-tokens.ts';
import { absoluteLink, lockedOutNotice } from './notices.ts';
import { hashPassword, PASSWORD_MAX, PASSWORD_MIN, passwordProblem } from './passwords.ts';
import { countAttempt, findUser, findUserByEmail, isLocked, setPassword } from '../users.ts';
import { proveAddress } from './verify-routes.ts';
import { lockoutOf, type DashboardDeps } from '../deps.ts';

const LINK_GONE = new PageError(404, 'Link expired', 'This reset link has expired or was used already. Ask for a new one.', { href: '/forgot-password', label: 'Reset your password' });

export async function resetRoutes(app: FastifyInstance, deps: DashboardDeps): Promise<void> {
  const limited = { rateLimit: { max: deps.settings.signInPerMinute, timeWindow: 60_000 } };
  const minutes = Math.max(1, Math.round(deps.settings.passwordResetMs / 60_000));

  app.get('/forgot-password', async (_request, reply) => reply.page('accounts/forgot-password', { title: 'Reset your password', email: '', sent: false, error: null, minutes }));

  app.post<{ Body: { email: string } }>('/forgot-password', { config: limited, schema: form({ email: text(320) }, ['email']), attachValidation: true }, async (request, reply) => {
    const email = (request.body?.email ?? '').trim();
    if (request.validationError || !EMAIL.test(email)) return reply.code(400).page('accounts/forgot-password', { title: 'Reset your password', email, sent: false, error: 'Enter an email address.', minutes });
    // The same page whether or not the address has an account; the mail goes in the background.
    const user = await findUserByEmail(deps.pool, email);
    if (user) {
      const token = await issueEmailToken(deps.pool, user.id, 'reset_password', deps.settings.passwordResetMs);
      deps.mailer.deliver(user.email, mails.passwordReset(absoluteLink(deps.publicBaseUrl, `/reset-password/${token}`), deps.settings.passwordResetMs, user.mfa_enrolled_at !== null));
      securityLog(request, 'password.reset_requested', { userId: user.id });
    }
    return reply.page('accounts/forgot-password', { title: 'Reset your password', email: '', sent: true, error: null, minutes });
  });

  const userOfLink = async (token: string) => {
    const userId = await openEmailToken(deps.pool, token, 'reset_password');
    const user = userId ? await findUser(deps.pool, userId) : null;
    if (!user) throw LINK_GONE;
    return user;
  };
  const resetPage = (token: string, mfa: boolean, error: string | null) => ({ title: 'Choose a new password', token, mfa, min: PASSWORD_MIN, error });

  app.get<{ Params: { token: string } }>('/reset-password/:token', async (request, reply) => {
    const user = await userOfLink(request.params.token);
    return reply.page('accounts/reset-password', resetPage(request.params.token, user.mfa_enrolled_at !== null, null));
  });

  app.post<{ Params: { token: string }; Body: { password: string; code?: string } }>(
    '/reset-password/:token',
    { config: limited, schema: form({ password: text(PASSWORD_MAX), code: text(40) }, ['password']), attachValidation: true },
    async (request, reply) => {
      const token = request.params.token;
      const user = await userOfLink(token);
      const mfa = user.mfa_enrolled_at !== null;
      const again = (status: number, error: string) => reply.code(status).page('accounts/reset-password', resetPage(token, mfa, error));
      const weak = request.validationError ? 'Enter a new password.' : passwordProblem(request.body.password);
      if (weak) return again(400, weak);
      if (mfa && !(await secondFactorPasses(request, user.id))) {
        return again(400, 'That code is not right. Enter the current code from your authenticator app, or one of your recovery codes. Wrong codes count toward the lockout.');
      }
      // Used up only now, once everything else passed: a wrong code leaves the link working.
      if ((await useEmailToken(deps.pool, token, 'reset_password')) !== user.id) throw LINK_GONE;
      await setPassword(deps.pool, user.id, await hashPassword(request.body.password));
      // The reset went through the mailbox: the address is proved too.
      await proveAddress(deps, user.id);
      const ended = await closeAllSessions(deps.pool, user.id);
      clearSessionCookie(reply, deps.settings.secureCookies);
      securityLog(request, 'password.reset', { userId: user.id, details: { sessions_ended: ended, second_factor: mfa } });
      deps.mailer.deliver(user.email, mails.passwordChanged('reset'));
      return reply.redirect('/sign-in?reset=1', 303);
    },
  );

  /** A code of the user's second factor, counted toward the lockout before it is checked. */
  async function secondFactorPasses(request: FastifyRequest, userId: string): Promise<boolean> {
    const attempt = await countAttempt(deps.pool, { userId }, lockoutOf(deps.settings));
    if (!attempt) throw LINK_GONE;
    if (!attempt.allowed) throw new PageError(429, 'Account locked', 'Too many wrong passwords or codes in a row: this account is locked for a while. Try the link again later.');
    const code = (request.body as { code?: string }).code ?? '';
    const passes = code.trim() !== '' && (await secondFactorMatches(deps.pool, deps.box, attempt.user, code));
    if (!passes) {
      securityLog(request, 'second_factor.failed', { userId, status: 400, reason: 'password reset' });
      if (isLocked(attempt.user)) lockedOutNotice(request, deps, attempt.user);
    }
    return passes;
  }
}
