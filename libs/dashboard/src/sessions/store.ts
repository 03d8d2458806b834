// Dashboard sessions, held in Postgres. The cookie carries an opaque random id; only its SHA-256
// is stored, so a copy of the table signs no one in.
import { randomBytes } from 'node:crypto';
import { sql, z, type Queryable } from '@gw/db';
import { hashSecret } from '@gw/security';
import type { Role } from '../roles/permissions.ts';

export type SessionStage = 'password' | 'full';

export interface SessionTimeouts {
  idleMs: number;
  absoluteMs: number;
}

/** Who a live session belongs to, and what it has proved. */
export const SignedInRow = z.object({
  id_hash: z.instanceof(Buffer),
  user_id: z.string(),
  email: z.string(),
  customer_id: z.string().nullable(),
  customer_name: z.string().nullable(),
  role: z.enum(['owner', 'admin', 'developer', 'compliance', 'viewer']).nullable(),
  stage: z.enum(['password', 'full']),
  mfa_enrolled: z.boolean(),
  /** The address is proved: until then the account can only verify it (or ask for the link again). */
  email_verified: z.boolean(),
  mfa_at: z.date().nullable(),
  created_at: z.date(),
  last_seen_at: z.date(),
});
export type SignedIn = Omit<z.infer<typeof SignedInRow>, 'role'> & {
  role: Role | null;
  /** The dashboard's lockout settings, carried with the account so every code check (sign-in and step-up) counts toward the same lockout. */
  lockout?: { after: number; ms: number };
};

export type SessionLookup = { kind: 'none' } | { kind: 'expired' } | { kind: 'live'; session: SignedIn };

const newSessionId = () => randomBytes(32).toString('base64url');

/** Opens a session (a fresh id, never one the client chose) and returns the id for the cookie. */
export async function openSession(pool: Queryable, input: { userId: string; customerId: string | null; stage: SessionStage; mfaAt: Date | null; userAgent?: string | undefined }): Promise<string> {
  const id = newSessionId();
  await pool.query(sql.typeAlias('void')`
    INSERT INTO dashboard_sessions (id_hash, user_id, customer_id, stage, mfa_at, user_agent)
    VALUES (${sql.binary(hashSecret(id))}, ${input.userId}, ${input.customerId}, ${input.stage}, ${input.mfaAt ? sql.timestamp(input.mfaAt) : null}, ${input.userAgent ? input.userAgent.slice(0, 300) : null})`);
  return id;
}

/**
 * The session behind a cookie's id. One past its idle or absolute timeout is deleted and
 * reported as expired; a live one is marked as used (at most once a minute, to spare writes).
 */
export async function findSession(pool: Queryable, id: string, timeouts: SessionTimeouts, now = new Date()): Promise<SessionLookup> {
  const idHash = hashSecret(id);
  const row = await pool.maybeOne(sql.type(SignedInRow)`
    SELECT s.id_hash, s.user_id, u.email, s.customer_id, c.name AS customer_name, m.role, s.stage,
           (u.mfa_enrolled_at IS NOT NULL) AS mfa_enrolled, (u.email_verified_at IS NOT NULL) AS email_verified, s.mfa_at, s.created_at, s.last_seen_at
    FROM dashboard_sessions s
    JOIN users u ON u.id = s.user_id
    LEFT JOIN customers c ON c.id = s.customer_id
    LEFT JOIN memberships m ON m.user_id = s.user_id AND m.customer_id = s.customer_id
    WHERE s.id_hash = ${sql.binary(idHash)}`);
  if (!row) return { kind: 'none' };
  const idle = now.getTime() - row.last_seen_at.getTime() > timeouts.idleMs;
  const tooOld = now.getTime() - row.created_at.getTime() > timeouts.absoluteMs;
  if (idle || tooOld) {
    await pool.query(sql.typeAlias('void')`DELETE FROM dashboard_sessions WHERE id_hash = ${sql.binary(idHash)}`);
    return { kind: 'expired' };
  }
  if (now.getTime() - row.last_seen_at.getTime() > 60_000) {
    await pool.query(sql.typeAlias('void')`UPDATE dashboard_sessions SET last_seen_at = ${sql.timestamp(now)} WHERE id_hash = ${sql.binary(idHash)}`);
  }
  return { kind: 'live', session: row };
}

/**
 * Moves a session to a new id (at sign-in's second step and at every change of privilege), so
 * an id seen before the change is worth nothing after it. Returns the new id for the cookie.
 */
export async function rotateSession(pool: Queryable, idHash: Buffer, change: { stage?: SessionStage; mfaAt?: Date; customerId?: string }): Promise<string> {
  const id = newSessionId();
  const updated = await pool.query(sql.typeAlias('void')`
    UPDATE dashboard_sessions SET id_hash = ${sql.binary(hashSecret(id))},
      stage = COALESCE(${change.stage ?? null}, stage),
      mfa_at = COALESCE(${change.mfaAt ? sql.timestamp(change.mfaAt) : null}, mfa_at),
      customer_id = COALESCE(${change.customerId ?? null}, customer_id)
    WHERE id_hash = ${sql.binary(idHash)}`);
  if (updated.rowCount !== 1) throw new Error('the session to rotate is gone');
  return id;
}

export async function closeSession(pool: Queryable, idHash: Buffer): Promise<void> {
  await pool.query(sql.typeAlias('void')`DELETE FROM dashboard_sessions WHERE id_hash = ${sql.binary(idHash)}`);
}

/** Every session of the user but this one ends (a change of the second factor). */
export async function closeOtherSessions(pool: Queryable, userId: string, keepIdHash: Buffer): Promise<number> {
  const result = await pool.query(sql.typeAlias('void')`DELETE FROM dashboard_sessions WHERE user_id = ${userId} AND id_hash <> ${sql.binary(keepIdHash)}`);
  return result.rowCount;
}

/** Sign out everywhere: every session of the user ends. */
export async function closeAllSessions(pool: Queryable, userId: string): Promise<number> {
  const result = await pool.query(sql.typeAlias('void')`DELETE FROM dashboard_sessions WHERE user_id = ${userId}`);
  return result.rowCount;
}

/** A session as the account page lists it: `ref` names it in a form (a hash of the stored hash: it opens nothing). */
export const SessionListRow = z.object({ ref: z.string(), created_at: z.date(), last_seen_at: z.date(), user_agent: z.string().nullable(), stage: z.enum(['password', 'full']), current: z.boolean() });
export type ListedSession = z.infer<typeof SessionListRow>;

/** The user's sessions, the newest first; `current` marks the one asking. */
export async function listSessions(pool: Queryable, userId: string, currentIdHash: Buffer): Promise<readonly ListedSession[]> {
  return pool.any(sql.type(SessionListRow)`
    SELECT encode(sha256(id_hash), 'hex') AS ref, created_at, last_seen_at, user_agent, stage, (id_hash = ${sql.binary(currentIdHash)}) AS current
    FROM dashboard_sessions WHERE user_id = ${userId} ORDER BY created_at DESC`);
}

/** Ends one of the user's sessions by its ref; false when the user has no such session. */
export async function closeSessionByRef(pool: Queryable, userId: string, ref: string): Promise<boolean> {
  if (!/^[0-9a-f]{64}$/.test(ref)) return false;
  const result = await pool.query(sql.typeAlias('void')`DELETE FROM dashboard_sessions WHERE user_id = ${userId} AND encode(sha256(id_hash), 'hex') = ${ref}`);
  return result.rowCount === 1;
}
