// MFA enrolment: a new TOTP secret shown as a QR (and as text), confirmed by a first code; then
// ten recovery codes, shown once. The pending secret travels in the form sealed with the
// gateway's key (bound to the user), so nothing is stored until the code proves the app has it.
// Replacing the second factor of a user who has one asks for a code of the CURRENT factor (a
// TOTP code or a recovery code, counted toward the lockout like any code) and ends the user's
// other sessions: a stolen session alone cannot take over the account's second factor.
import type { FastifyInstance } from 'fastify';
import { mails } from '@gw/mail';
import { form, text } from '../forms.ts';
import { securityLog } from '../plugins/security-log.ts';
import { requireSignedIn } from '../sessions/guards.ts';
import { setSessionCookie } from '../sessions/plugin.ts';
import { closeOtherSessions, rotateSession } from '../sessions/store.ts';
import { STEP_UP_REFUSED, stepUpPasses, stepUpRateLimit } from './step-up.ts';
import { codeStep, enrolmentQr, newRecoveryCodes, newTotpSecret, saveEnrolment } from './totp.ts';
import type { DashboardDeps } from '../deps.ts';

interface Pending {
  user: string;
  secret: string;
}

const TITLE = 'Two-factor authentication';

export async function mfaRoutes(app: FastifyInstance, deps: DashboardDeps): Promise<void> {
  const enrolPage = async (email: string, userId: string, replacing: boolean, secret = newTotpSecret()) => {
    const { qr } = await enrolmentQr(email, secret);
    const pending = deps.box.seal(JSON.stringify({ user: userId, secret } satisfies Pending));
    return { title: TITLE, enrolled: false, replacing, qr, secret, pending, error: null, codes: null, replaced: false };
  };

  app.get<{ Querystring: { replace?: string } }>('/account/mfa', { preHandler: requireSignedIn }, async (request, reply) => {
    const account = request.account!;
    if (account.mfa_enrolled && request.query.replace !== '1') return reply.page('mfa/mfa', { title: TITLE, enrolled: true, codes: null, error: null });
    return reply.page('mfa/mfa', await enrolPage(account.email, account.user_id, account.mfa_enrolled));
  });

  app.post<{ Body: { pending: string; code: string; current_code?: string } }>(
    '/account/mfa',
    {
      preHandler: requireSignedIn,
      schema: form({ pending: text(2000), code: text(40), current_code: text(40) }, ['pending', 'code']),
      attachValidation: true,
      config: stepUpRateLimit(deps.settings.signInPerMinute),
    },
    async (request, reply) => {
      const account = request.account!;
      const replacing = account.mfa_enrolled;
      let pending: Pending | null = null;
      try {
        pending = request.validationError ? null : (JSON.parse(deps.box.open(request.body.pending)) as Pending);
      } catch {
        pending = null;
      }
      if (!pending || pending.user !== account.user_id) return reply.code(400).page('mfa/mfa', { ...(await enrolPage(account.email, account.user_id, replacing)), error: 'The enrolment form expired. Scan this new code.' });
      const again = async (error: string) => reply.code(400).page('mfa/mfa', { ...(await enrolPage(account.email, account.user_id, replacing, pending.secret)), error });
      // The new app's code first (it has no side effect), then the current factor's.
      const step = await codeStep(pending.secret, request.body.code);
      if (step === null) return again('That code is not right. Enter the 6 digits your authenticator app shows now.');
      if (replacing && !(await stepUpPasses(deps.pool, deps.box, account, request.body.current_code))) {
        securityLog(request, 'second_factor.failed', { status: 400, reason: 'replacing the second factor' });
        return again(`A code of your current second factor is needed. ${STEP_UP_REFUSED}`);
      }
      const codes = newRecoveryCodes();
      await saveEnrolment(deps.pool, deps.box, account.user_id, pending.secret, codes, step);
      if (replacing) await closeOtherSessions(deps.pool, account.user_id, account.id_hash);
      securityLog(request, replacing ? 'second_factor.replaced' : 'second_factor.enrolled');
      deps.mailer.deliver(account.email, mails.secondFactorChanged(replacing));
      if (account.customer_id) await deps.appends.audit.record({ customerId: account.customer_id, action: replacing ? 'user.mfa_replaced' : 'user.mfa_enrolled', subjectId: account.user_id, by: account.email, via: 'dashboard' });
      // A change of privilege: the session moves to a new id.
      const id = await rotateSession(deps.pool, account.id_hash, { mfaAt: new Date() });
      setSessionCookie(reply, id, deps.settings.secureCookies);
      return reply.page('mfa/mfa', { title: TITLE, enrolled: true, codes, error: null, replaced: replacing });
    },
  );
}
