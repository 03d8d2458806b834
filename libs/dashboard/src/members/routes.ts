// Members and invitations: who belongs to the customer and with which role. Invitations go by
// link (shown once to the inviter); changing a role asks for a TOTP code again (step-up), and
// ends the member's sessions on this customer so the change takes effect under a new id. Only
// an owner makes or unmakes owners, and the last owner stays.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { mails } from '@gw/mail';
import { hashPassword, PASSWORD_MAX, PASSWORD_MIN, passwordProblem } from '../accounts/passwords.ts';
import { addMembership, createUser, EmailTaken, findUser, findUserByEmail } from '../users.ts';
import { absoluteLink, sendVerification } from '../accounts/notices.ts';
import { recordChange } from '../appends.ts';
import { requireStepUp, STEP_UP_REFUSED, stepUpPasses, stepUpRateLimit } from '../mfa/step-up.ts';
import { isRole, ROLES, type Role } from '../roles/permissions.ts';
import { member, PageError, requirePermission } from '../sessions/guards.ts';
import { setSessionCookie } from '../sessions/plugin.ts';
import { openSession, rotateSession } from '../sessions/store.ts';
import { acceptInvite, createInvite, endSessionsOn, findInvite, INVITABLE_ROLES, INVITE_DAYS, listMembers, listOpenInvites, ownerCount, removeMember, roleOf, setRole, type InvitableRole } from './store.ts';
import { EMAIL, form, text } from '../forms.ts';
import type { DashboardDeps } from '../deps.ts';
import type { MembersPage } from './pages.ts';

export async function memberRoutes(app: FastifyInstance, deps: DashboardDeps): Promise<void> {
  const page = async (request: FastifyRequest, extra: Partial<MembersPage> = {}): Promise<MembersPage> => {
    const customerId = member(request).customer_id;
    return { title: 'Members', members: await listMembers(deps.pool, customerId), invites: await listOpenInvites(deps.pool, customerId), roles: ROLES, invitable: INVITABLE_ROLES, days: INVITE_DAYS, link: null, error: null, ...extra };
  };

  /** The member to change, refused when it is not one of this customer's, or when only an owner may do it. */
  const target = async (request: FastifyRequest, userId: string, newRole: Role | null) => {
    const me = member(request);
    const current = await roleOf(deps.pool, me.customer_id, userId);
    if (!current) throw new PageError(404, 'No such member', 'That person is not a member of your organisation.');
    if ((current === 'owner' || newRole === 'owner') && me.role !== 'owner') throw new PageError(403, 'Owners only', 'Only an owner can make someone an owner, or change an owner.');
    if (current === 'owner' && newRole !== 'owner' && (await ownerCount(deps.pool, me.customer_id)) === 1) throw new PageError(400, 'The last owner', 'Your organisation needs at least one owner. Make someone else an owner first.');
    return current;
  };

  /** The member's privileges changed: their sessions here end (ours moves to a new id). */
  const privilegesChanged = async (request: FastifyRequest, reply: FastifyReply, userId: string) => {
    const me = member(request);
    if (userId !== me.user_id) return endSessionsOn(deps.pool, me.customer_id, userId);
    setSessionCookie(reply, await rotateSession(deps.pool, me.id_hash, {}), deps.settings.secureCookies);
  };

  app.get('/members', { preHandler: requirePermission('dashboard.view') }, async (request, reply) => reply.page('members/members', await page(request)));

  app.post<{ Body: { email: string; role: string; code?: string } }>(
    '/members/invite',
    { preHandler: requirePermission('members.manage'), schema: form({ email: text(320), role: text(20), code: text(40) }, ['email', 'role']), attachValidation: true, config: stepUpRateLimit(deps.settings.signInPerMinute) },
    async (request, reply) => {
      const email = (request.body?.email ?? '').trim();
      const role = request.body?.role as InvitableRole;
      if (request.validationError || !EMAIL.test(email) || !INVITABLE_ROLES.includes(role)) {
        return reply.code(400).page('members/members', await page(request, { error: 'Enter an email address and choose a role.' }));
      }
      // An invitation grants a role: a code again, as for a role change.
      if (!(await stepUpPasses(deps.pool, deps.box, member(request), request.body?.code))) return reply.code(400).page('members/members', await page(request, { error: STEP_UP_REFUSED }));
      const me = member(request);
      const token = await createInvite(deps.pool, { customerId: me.customer_id, email, role, invitedBy: me.user_id });
      await recordChange(deps.appends.audit, request, { action: 'member.invited', subjectId: email, details: { role } });
      const link = absoluteLink(deps.publicBaseUrl, `/invites/${token}`);
      deps.mailer.deliver(email, mails.invitation(me.customer_name ?? 'an organisation', role, link, INVITE_DAYS));
      return reply.page('members/members', await page(request, { link, invitedEmail: email }));
    },
  );

  app.post<{ Params: { userId: string }; Body: { role: string; code: string } }>(
    '/members/:userId/role',
    { preHandler: requirePermission('members.manage'), schema: form({ role: text(20), code: text(40) }, ['role']), attachValidation: true, config: stepUpRateLimit(deps.settings.signInPerMinute) },
    async (request, reply) => {
      const role = request.body?.role;
      if (!isRole(role)) return reply.code(400).page('members/members', await page(request, { error: 'Choose a role.' }));
      const previous = await target(request, request.params.userId, role);
      await requireStepUp(deps.pool, deps.box, member(request), request.body.code);
      await setRole(deps.pool, member(request).customer_id, request.params.userId, role);
      await recordChange(deps.appends.audit, request, { action: 'member.role_changed', subjectId: request.params.userId, details: { from: previous, to: role } });
      const changed = await findUser(deps.pool, request.params.userId);
      if (changed && previous !== role) deps.mailer.deliver(changed.email, mails.roleChanged(member(request).customer_name ?? 'your organisation', previous, role));
      await privilegesChanged(request, reply, request.params.userId);
      return reply.redirect('/members', 303);
    },
  );

  app.post<{ Params: { userId: string } }>('/members/:userId/remove', { preHandler: requirePermission('members.manage'), schema: form({}, []) }, async (request, reply) => {
    await target(request, request.params.userId, null);
    const me = member(request);
    await removeMember(deps.pool, me.customer_id, request.params.userId);
    await recordChange(deps.appends.audit, request, { action: 'member.removed', subjectId: request.params.userId });
    await endSessionsOn(deps.pool, me.customer_id, request.params.userId);
    return reply.redirect(request.params.userId === me.user_id ? '/sign-in' : '/members', 303);
  });

  // Following an invitation: public, as the invited person may have no account yet.
  app.get<{ Params: { token: string } }>('/invites/:token', async (request, reply) => {
    const invite = await findInvite(deps.pool, request.params.token);
    if (!invite) throw new PageError(404, 'Invitation not found', 'This invitation has expired or was used already. Ask for a new one.');
    const account = request.account?.stage === 'full' ? request.account : null;
    const hasAccount = account ? true : Boolean(await findUserByEmail(deps.pool, invite.email));
    return reply.page('members/invite', { title: 'Invitation', invite, token: request.params.token, signedInAs: account?.email ?? null, hasAccount, min: PASSWORD_MIN, error: null });
  });

  app.post<{ Params: { token: string }; Body: { password?: string } }>(
    '/invites/:token/accept',
    { schema: form({ password: text(PASSWORD_MAX) }, []), attachValidation: true },
    async (request, reply) => {
      const invite = await findInvite(deps.pool, request.params.token);
      if (!invite) throw new PageError(404, 'Invitation not found', 'This invitation has expired or was used already. Ask for a new one.');
      const account = request.account?.stage === 'full' ? request.account : null;
      if (account) {
        if (account.email.toLowerCase() !== invite.email.toLowerCase()) throw new PageError(403, 'Another account', `This invitation is for ${invite.email}. Sign out, then open the link again.`);
        if (!(await acceptInvite(deps.pool, request.params.token))) throw new PageError(404, 'Invitation not found', 'This invitation was used already.');
        await addMembership(deps.pool, account.user_id, invite.customer_id, invite.role);
        await deps.appends.audit.record({ customerId: invite.customer_id, action: 'member.joined', subjectId: account.user_id, by: account.email, via: 'dashboard', details: { role: invite.role } });
        setSessionCookie(reply, await rotateSession(deps.pool, account.id_hash, { customerId: invite.customer_id }), deps.settings.secureCookies);
        return reply.redirect('/instances', 303);
      }
      const weak = passwordProblem(request.body?.password ?? '');
      const again = (error: string) => reply.code(400).page('members/invite', { title: 'Invitation', invite, token: request.params.token, signedInAs: null, hasAccount: false, min: PASSWORD_MIN, error });
      if (weak) return again(weak);
      let userId: string;
      try {
        // Unverified like a sign-up: the link was shown to the inviter too, so it proves no mailbox.
        userId = await createUser(deps.pool, invite.email, await hashPassword(request.body!.password!));
      } catch (error) {
        if (error instanceof EmailTaken) throw new PageError(409, 'You have an account', `There is already an account for ${invite.email}. Sign in, then open the link again.`, { href: `/sign-in?next=${encodeURIComponent(`/invites/${request.params.token}`)}`, label: 'Sign in' });
        throw error;
      }
      if (!(await acceptInvite(deps.pool, request.params.token))) throw new PageError(404, 'Invitation not found', 'This invitation was used already.');
      await addMembership(deps.pool, userId, invite.customer_id, invite.role);
      await deps.appends.audit.record({ customerId: invite.customer_id, action: 'member.joined', subjectId: userId, by: invite.email, via: 'dashboard', details: { role: invite.role } });
      await sendVerification(deps, userId, invite.email);
      setSessionCookie(reply, await openSession(deps.pool, { userId, customerId: invite.customer_id, stage: 'full', mfaAt: null, userAgent: request.headers['user-agent'] }), deps.settings.secureCookies);
      return reply.redirect('/account/mfa', 303);
    },
  );
}
