// People who sign in to the dashboard, and the customers they belong to (with a role there).
import { sql, UniqueIntegrityConstraintViolationError, z, type Queryable } from '@gw/db';
import { newId } from '@gw/security';
import type { Role } from '../roles/permissions.ts';

export const UserRow = z.object({
  id: z.string(),
  email: z.string(),
  password_hash: z.string(),
  totp_secret_enc: z.string().nullable(),
  mfa_enrolled_at: z.date().nullable(),
  failed_sign_ins: z.number(),
  locked_until: z.date().nullable(),
});
export type User = z.infer<typeof UserRow>;

const Membership = z.object({ customer_id: z.string(), role: z.enum(['owner', 'admin', 'developer', 'compliance', 'viewer']) });

export class EmailTaken extends Error {}

/** Emails are compared without case; stored as typed, trimmed. */
export const normaliseEmail = (email: string) => email.trim();

export async function createUser(pool: Queryable, email: string, passwordHash: string): Promise<string> {
  const id = newId('usr');
  try {
    await pool.query(sql.typeAlias('void')`INSERT INTO users (id, email, password_hash) VALUES (${id}, ${normaliseEmail(email)}, ${passwordHash})`);
  } catch (error) {
    if (error instanceof UniqueIntegrityConstraintViolationError) throw new EmailTaken();
    throw error;
  }
  return id;
}

export async function findUserByEmail(pool: Queryable, email: string): Promise<User | null> {
  return pool.maybeOne(sql.type(UserRow)`
    SELECT id, email, password_hash, totp_secret_enc, mfa_enrolled_at, failed_sign_ins, locked_until
    FROM users WHERE lower(email) = lower(${normaliseEmail(email)})`);
}

export async function findUser(pool: Queryable, userId: string): Promise<User | null> {
  return pool.maybeOne(sql.type(UserRow)`
    SELECT id, email, password_hash, totp_secret_enc, mfa_enrolled_at, failed_sign_ins, locked_until FROM users WHERE id = ${userId}`);
}

/** Counts a wrong password or code; the `lockoutAfter`-th in a row locks the account for `lockoutMs`. */
export async function recordFailure(pool: Queryable, userId: string, lockout: { after: number; ms: number }, now = new Date()): Promise<void> {
  await pool.query(sql.typeAlias('void')`
    UPDATE users SET failed_sign_ins = failed_sign_ins + 1,
      locked_until = CASE WHEN failed_sign_ins + 1 >= ${lockout.after} THEN ${sql.timestamp(new Date(now.getTime() + lockout.ms))} ELSE locked_until END
    WHERE id = ${userId}`);
}

export async function clearFailures(pool: Queryable, userId: string): Promise<void> {
  await pool.query(sql.typeAlias('void')`UPDATE users SET failed_sign_ins = 0, locked_until = NULL WHERE id = ${userId}`);
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
