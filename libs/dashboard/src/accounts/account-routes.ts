// The user's own account page: changing the password (with the current one, counted toward the
// lockout like a sign-in; it ends the user's other sessions) and the list of the user's sessions
// (created, last seen, browser, this one marked), each of which can be ended.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { mails } from '@gw/mail';
import { form, text } from '../forms.ts';
import { securityLog } from '../plugins/security-log.ts';
import { PageError, requireSignedIn } from '../sessions/guards.ts';
import { clearSessionCookie, setSessionCookie } from '../sessions/plugin.ts';
import { closeOtherSessions, closeSessionByRef, listSessions, rotateSession } from '../sessions/store.ts';
import { browserName } from './browser-name.ts';
import { lockedOutNotice } from './notices.ts';
import { hashPassword, PASSWORD_MAX, PASSWORD_MIN, passwordMatches, passwordProblem } from './passwords.ts';
import { clearFailures, countAttempt, isLocked, setPassword } from '../users.ts';
import { lockoutOf, type DashboardDeps } from '../deps.ts';
import type { AccountPage } from './pages.ts';

const DONE: Record<string, string> = {
  password: 'Your password is changed. Your other sessions were ended.',
  session: 'The session was ended.',
};

export async function accountPageRoutes(app: FastifyInstance, deps: DashboardDeps): Promise<void> {
  const page = async (request: FastifyRequest, extra: Partial<AccountPage> = {}): Promise<AccountPage> => {
    const account = request.account!;
    const done = (request.query as { done?: string } | undefined)?.done;
    const sessions = (await listSessions(deps.pool, account.user_id, account.id_hash)).map((s) => ({ ...s, browser: browserName(s.user_agent) }));
    return { title: 'Your account', sessions, min: PASSWORD_MIN, passwordError: null, notice: (done && DONE[done]) ?? null, ...extra };
  };

  app.get('/account', { preHandler: requireSignedIn }, async (request, reply) => reply.page('accounts/account', await page(request)));

  app.post<{ Body: { current_password: string; password: string } }>(
    '/account/password',
    {
      preHandler: requireSignedIn,
      schema: form({ current_password: text(PASSWORD_MAX), password: text(PASSWORD_MAX) }, ['current_password', 'password']),
      attachValidation: true,
      config: { rateLimit: { max: deps.settings.signInPerMinute, timeWindow: 60_000, keyGenerator: (request: FastifyRequest) => request.account?.user_id ?? request.ip } },
    },
    async (request, reply) => {
      const account = request.account!;
      const again = async (status: number, error: string) => reply.code(status).page('accounts/account', await page(request, { passwordError: error }));
      if (request.validationError) return again(400, 'Enter your current password and a new one.');
      const weak = passwordProblem(request.body.password);
      if (weak) return again(400, `The new password: ${weak}`);
      // Counted before the check, exactly as a sign-in: a stolen session cannot guess the password.
      const attempt = await countAttempt(deps.pool, { userId: account.user_id }, lockoutOf(deps.settings));
      if (!attempt) throw new PageError(401, 'Signed out', 'Sign in first.', { href: '/sign-in', label: 'Sign in' });
      if (!attempt.allowed) return again(429, 'Too many wrong passwords or codes in a row: this account is locked for a while.');
      if (!(await passwordMatches(request.body.current_password, attempt.user.password_hash))) {
        securityLog(request, 'password.change_failed', { status: 400, reason: 'wrong current password' });
        if (isLocked(attempt.user)) lockedOutNotice(request, deps, attempt.user);
        return again(400, 'Your current password is not right. Wrong passwords count toward the lockout.');
      }
      await clearFailures(deps.pool, account.user_id);
      await setPassword(deps.pool, account.user_id, await hashPassword(request.body.password));
      const ended = await closeOtherSessions(deps.pool, account.user_id, account.id_hash);
      setSessionCookie(reply, await rotateSession(deps.pool, account.id_hash, {}), deps.settings.secureCookies);
      securityLog(request, 'password.changed', { details: { sessions_ended: ended } });
      deps.mailer.deliver(account.email, mails.passwordChanged('changed'));
      return reply.redirect('/account?done=password', 303);
    },
  );

  app.post<{ Params: { ref: string } }>('/account/sessions/:ref/end', { preHandler: requireSignedIn, schema: form({}, []) }, async (request, reply) => {
    const account = request.account!;
    const sessions = await listSessions(deps.pool, account.user_id, account.id_hash);
    const target = sessions.find((s) => s.ref === request.params.ref);
    if (!target || !(await closeSessionByRef(deps.pool, account.user_id, target.ref))) {
      throw new PageError(404, 'No such session', 'That session has ended already, or is not one of yours.', { href: '/account', label: 'Your account' });
    }
    securityLog(request, 'session.ended', { details: { current: target.current } });
    if (target.current) {
      clearSessionCookie(reply, deps.settings.secureCookies);
      return reply.redirect('/sign-in?signed_out=1', 303);
    }
    return reply.redirect('/account?done=session', 303);
  });
}
