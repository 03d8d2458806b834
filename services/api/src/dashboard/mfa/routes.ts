// MFA enrolment: a new TOTP secret shown as a QR (and as text), confirmed by a first code; then
// ten recovery codes, shown once. The pending secret travels in the form sealed with the
// gateway's key (bound to the user), so nothing is stored until the code proves the app has it.
import type { FastifyInstance } from 'fastify';
import type { AuditTrail } from '@gw/accounts';
import type { Pool } from '@gw/db';
import type { SecretBox } from '@gw/security';
import { form, text } from '../forms.ts';
import { requireSignedIn } from '../sessions/guards.ts';
import { setSessionCookie } from '../sessions/plugin.ts';
import { rotateSession } from '../sessions/store.ts';
import { codeMatches, enrolmentQr, newRecoveryCodes, newTotpSecret, saveEnrolment } from './totp.ts';

export interface MfaRoutesOptions {
  pool: Pool;
  box: SecretBox;
  audit: AuditTrail;
  secureCookies: boolean;
}

interface Pending {
  user: string;
  secret: string;
}

export async function mfaRoutes(app: FastifyInstance, opts: MfaRoutesOptions): Promise<void> {
  const enrolPage = async (email: string, userId: string, secret = newTotpSecret()) => {
    const { qr } = await enrolmentQr(email, secret);
    const pending = opts.box.seal(JSON.stringify({ user: userId, secret } satisfies Pending));
    return { title: 'Two-factor authentication', enrolled: false, qr, secret, pending, error: null, codes: null };
  };

  app.get('/account/mfa', { preHandler: requireSignedIn }, async (request, reply) => {
    const account = request.account!;
    if (account.mfa_enrolled) return reply.page('mfa', { title: 'Two-factor authentication', enrolled: true, codes: null, error: null });
    return reply.page('mfa', await enrolPage(account.email, account.user_id));
  });

  app.post<{ Body: { pending: string; code: string } }>(
    '/account/mfa',
    {
      preHandler: requireSignedIn,
      schema: form({ pending: text(2000), code: text(40) }, ['pending', 'code']),
      attachValidation: true,
    },
    async (request, reply) => {
      const account = request.account!;
      let pending: Pending | null = null;
      try {
        pending = request.validationError ? null : (JSON.parse(opts.box.open(request.body.pending)) as Pending);
      } catch {
        pending = null;
      }
      if (!pending || pending.user !== account.user_id) return reply.code(400).page('mfa', { ...(await enrolPage(account.email, account.user_id)), error: 'The enrolment form expired. Scan this new code.' });
      if (!(await codeMatches(pending.secret, request.body.code))) {
        return reply.code(400).page('mfa', { ...(await enrolPage(account.email, account.user_id, pending.secret)), error: 'That code is not right. Enter the 6 digits your authenticator app shows now.' });
      }
      const codes = newRecoveryCodes();
      await saveEnrolment(opts.pool, opts.box, account.user_id, pending.secret, codes);
      if (account.customer_id) await opts.audit.record({ customerId: account.customer_id, action: 'user.mfa_enrolled', subjectId: account.user_id, by: account.email, via: 'dashboard' });
      // A change of privilege: the session moves to a new id.
      const id = await rotateSession(opts.pool, account.id_hash, { mfaAt: new Date() });
      setSessionCookie(reply, id, opts.secureCookies);
      return reply.page('mfa', { title: 'Two-factor authentication', enrolled: true, codes, error: null });
    },
  );
}
