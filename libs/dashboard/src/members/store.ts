// Members of a customer (users with a role there) and invitations by link. An invitation's token
// is shown once, in the link; only its SHA-256 is stored. Invitations last seven days.
import { randomBytes } from 'node:crypto';
import { sql, z, type Queryable } from '@gw/db';
import { hashSecret } from '@gw/security';
import type { Role } from '../roles/permissions.ts';

export const INVITE_DAYS = 7;

const MemberRow = z.object({ user_id: z.string(), email: z.string(), role: z.enum(['owner', 'admin', 'developer', 'compliance', 'viewer']), mfa_enrolled: z.boolean(), created_at: z.date() });
const InviteRow = z.object({ email: z.string(), role: z.enum(['admin', 'developer', 'compliance', 'viewer']), created_at: z.date(), expires_at: z.date() });
const OpenInvite = z.object({ customer_id: z.string(), customer_name: z.string(), email: z.string(), role: z.enum(['admin', 'developer', 'compliance', 'viewer']) });
export type InvitableRole = z.infer<typeof InviteRow>['role'];
export const INVITABLE_ROLES: readonly InvitableRole[] = ['admin', 'developer', 'compliance', 'viewer'];

export async function listMembers(pool: Queryable, customerId: string) {
  return pool.any(sql.type(MemberRow)`
    SELECT u.id AS user_id, u.email, m.role, (u.mfa_enrolled_at IS NOT NULL) AS mfa_enrolled, m.created_at
    FROM memberships m JOIN users u ON u.id = m.user_id WHERE m.customer_id = ${customerId} ORDER BY m.created_at, u.email`);
}

export async function listOpenInvites(pool: Queryable, customerId: string) {
  return pool.any(sql.type(InviteRow)`
    SELECT email, role, created_at, expires_at FROM invites
    WHERE customer_id = ${customerId} AND accepted_at IS NULL AND expires_at > now() ORDER BY created_at DESC`);
}

/** Creates an invitation and returns its token (for the link, shown once). */
export async function createInvite(pool: Queryable, input: { customerId: string; email: string; role: InvitableRole; invitedBy: string }): Promise<string> {
  const token = randomBytes(32).toString('base64url');
  await pool.query(sql.typeAlias('void')`
    INSERT INTO invites (token_hash, customer_id, email, role, invited_by, expires_at)
    VALUES (${sql.binary(hashSecret(token))}, ${input.customerId}, ${input.email.trim()}, ${input.role}, ${input.invitedBy}, now() + make_interval(days => ${INVITE_DAYS}))`);
  return token;
}

/** The open (unaccepted, unexpired) invitation behind a token, or null. */
export async function findInvite(pool: Queryable, token: string) {
  return pool.maybeOne(sql.type(OpenInvite)`
    SELECT i.customer_id, c.name AS customer_name, i.email, i.role FROM invites i JOIN customers c ON c.id = i.customer_id
    WHERE i.token_hash = ${sql.binary(hashSecret(token))} AND i.accepted_at IS NULL AND i.expires_at > now()`);
}

/** Uses up an invitation: true once, false if it was used (or expired) meanwhile. */
export async function acceptInvite(pool: Queryable, token: string): Promise<boolean> {
  const result = await pool.query(sql.typeAlias('void')`
    UPDATE invites SET accepted_at = now() WHERE token_hash = ${sql.binary(hashSecret(token))} AND accepted_at IS NULL AND expires_at > now()`);
  return result.rowCount === 1;
}

export async function roleOf(pool: Queryable, customerId: string, userId: string): Promise<Role | null> {
  return pool.maybeOneFirst(sql.type(z.object({ role: MemberRow.shape.role }))`SELECT role FROM memberships WHERE customer_id = ${customerId} AND user_id = ${userId}`);
}

export async function ownerCount(pool: Queryable, customerId: string): Promise<number> {
  return pool.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM memberships WHERE customer_id = ${customerId} AND role = 'owner'`);
}

export async function setRole(pool: Queryable, customerId: string, userId: string, role: Role): Promise<void> {
  await pool.query(sql.typeAlias('void')`UPDATE memberships SET role = ${role} WHERE customer_id = ${customerId} AND user_id = ${userId}`);
}

export async function removeMember(pool: Queryable, customerId: string, userId: string): Promise<void> {
  await pool.query(sql.typeAlias('void')`DELETE FROM memberships WHERE customer_id = ${customerId} AND user_id = ${userId}`);
}

/** Ends the user's sessions on this customer: a change of their privileges takes effect at once, under a new session id. */
export async function endSessionsOn(pool: Queryable, customerId: string, userId: string): Promise<void> {
  await pool.query(sql.typeAlias('void')`DELETE FROM dashboard_sessions WHERE customer_id = ${customerId} AND user_id = ${userId}`);
}
