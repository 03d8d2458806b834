// People who sign in to the dashboard, and the customers they belong to (with a role there).
import { sql, UniqueIntegrityConstraintViolationError, z, type Queryable } from '@gw/db';
import { newId } from '@gw/security';
import type { Role } from './roles/permissions.ts';

export const UserRow = z.object({
  id: z.string(),
  email: z.string(),
  password_hash: z.string(),
  totp_secret_enc: z.string().nullable(),
  mfa_enrolled_at: z.date().nullable(),
  failed_sign_ins: z.number(),
  locked_until: z.date().nullable(),
  email_verified_at: z.date().nullable(),
});
export type User = z.infer<typeof UserRow>;

const Membership = z.object({ customer_id: z.string(), role: z.enum(['owner', 'admin', 'developer', 'compliance', 'viewer']) });

export class EmailTaken extends Error {}

/** Emails are compared without case; stored as typed, trimmed. */
export const normaliseEmail = (email: string) => email.trim();

/**
 * A new user; unverified (the default here) until a link mailed to the address is followed.
 * `signUpOrganisation`: the organisation to create, with the user as owner, once it is.
 */
export async function createUser(pool: Queryable, email: string, passwordHash: string, options: { verified?: boolean; signUpOrganisation?: string } = {}): Promise<string> {
  const id = newId('usr');
  try {
    await pool.query(sql.typeAlias('void')`
      INSERT INTO users (id, email, password_hash, email_verified_at, signup_organisation)
      VALUES (${id}, ${normaliseEmail(email)}, ${passwordHash}, ${options.verified ? sql.fragment`now()` : null}, ${options.signUpOrganisation ?? null})`);
  } catch (error) {
    if (error instanceof UniqueIntegrityConstraintViolationError) throw new EmailTaken();
    throw error;
  }
  return id;
}

export async function findUserByEmail(pool: Queryable, email: string): Promise<User | null> {
  return pool.maybeOne(sql.type(UserRow)`
    SELECT id, email, password_hash, totp_secret_enc, mfa_enrolled_at, failed_sign_ins, locked_until, email_verified_at
    FROM users WHERE lower(email) = lower(${normaliseEmail(email)})`);
}

export async function findUser(pool: Queryable, userId: string): Promise<User | null> {
  return pool.maybeOne(sql.type(UserRow)`
    SELECT id, email, password_hash, totp_secret_enc, mfa_enrolled_at, failed_sign_ins, locked_until, email_verified_at FROM users WHERE id = ${userId}`);
}

/** An attempt to prove who one is (a password or a code), counted before it is checked. */
export interface CountedAttempt {
  user: User;
  /** False when the account was locked before this attempt: refuse it without looking at what was typed. */
  allowed: boolean;
}

/**
 * Counts an attempt BEFORE its password or code is checked, in one statement: the row is locked
 * (FOR UPDATE, so parallel attempts are counted one after the other, each seeing the others'
 * counts), a count whose lock has expired starts again, and the `lockout.after`-th attempt in a
 * row locks the account for `lockout.ms`. An attempt made while locked is not allowed (and not
 * counted: the lock does not grow). A right answer then clears the count (clearFailures).
 * Null: no such user.
 */
export async function countAttempt(pool: Queryable, who: { email: string } | { userId: string }, lockout: { after: number; ms: number }, now = new Date()): Promise<CountedAttempt | null> {
  const at = sql.timestamp(now);
  const match = 'email' in who ? sql.fragment`lower(email) = lower(${normaliseEmail(who.email)})` : sql.fragment`id = ${who.userId}`;
  const row = await pool.maybeOne(sql.type(UserRow.extend({ was_locked: z.boolean() }))`
    WITH cur AS (
      SELECT id, failed_sign_ins, locked_until, (locked_until IS NOT NULL AND locked_until > ${at}) AS was_locked,
             CASE WHEN locked_until IS NOT NULL AND locked_until <= ${at} THEN 1 ELSE failed_sign_ins + 1 END AS next_count
      FROM users WHERE ${match} FOR UPDATE
    )
    UPDATE users u SET
      failed_sign_ins = CASE WHEN cur.was_locked THEN cur.failed_sign_ins ELSE cur.next_count END,
      locked_until = CASE WHEN cur.was_locked THEN cur.locked_until
                          WHEN cur.next_count >= ${lockout.after} THEN ${sql.timestamp(new Date(now.getTime() + lockout.ms))}
                          ELSE NULL END,
      last_failed_at = CASE WHEN cur.was_locked THEN u.last_failed_at ELSE ${at} END
    FROM cur WHERE u.id = cur.id
    RETURNING u.id, u.email, u.password_hash, u.totp_secret_enc, u.mfa_enrolled_at, u.failed_sign_ins, u.locked_until, u.email_verified_at, cur.was_locked`);
  if (!row) return null;
  const { was_locked: wasLocked, ...user } = row;
  return { user, allowed: !wasLocked };
}

export async function clearFailures(pool: Queryable, userId: string): Promise<void> {
  await pool.query(sql.typeAlias('void')`UPDATE users SET failed_sign_ins = 0, locked_until = NULL WHERE id = ${userId}`);
}

/** A new password (already hashed); the failure count starts again. */
export async function setPassword(pool: Queryable, userId: string, passwordHash: string): Promise<void> {
  await pool.query(sql.typeAlias('void')`UPDATE users SET password_hash = ${passwordHash}, failed_sign_ins = 0, locked_until = NULL WHERE id = ${userId}`);
}

/**
 * The address is proved (a mailed link was followed): kept from the first proof on. Returns the
 * organisation named at sign-up, to create now (once: it is cleared in the same statement).
 */
export async function markEmailVerified(pool: Queryable, userId: string): Promise<{ email: string; organisation: string | null } | null> {
  return pool.maybeOne(sql.type(z.object({ email: z.string(), organisation: z.string().nullable() }))`
    UPDATE users u SET email_verified_at = COALESCE(u.email_verified_at, now()), signup_organisation = NULL
    FROM (SELECT id, signup_organisation FROM users WHERE id = ${userId} FOR UPDATE) before
    WHERE u.id = before.id
    RETURNING u.email, before.signup_organisation AS organisation`);
}

export const isLocked = (user: User, now = new Date()) => user.locked_until !== null && user.locked_until.getTime() > now.getTime();

export async function addMembership(pool: Queryable, userId: string, customerId: string, role: Role): Promise<void> {
  await pool.query(sql.typeAlias('void')`
    INSERT INTO memberships (user_id, customer_id, role) VALUES (${userId}, ${customerId}, ${role})
    ON CONFLICT (user_id, customer_id) DO UPDATE SET role = EXCLUDED.role`);
}

/** The customer a new session opens on: the user's first membership. */
export async function firstMembership(pool: Queryable, userId: string) {
  return pool.maybeOne(sql.type(Membership)`SELECT customer_id, role FROM memberships WHERE user_id = ${userId} ORDER BY created_at, customer_id LIMIT 1`);
}
