// Links mailed to a user: one to verify the address, one to reset the password. Each token is 256
// random bits, shown only in the mail; only its SHA-256 is stored. A token works once and until it
// expires; a new one of the same purpose ends the ones before (only the latest mail works).
import { randomBytes } from 'node:crypto';
import { sql, z, type Queryable } from '@gw/db';
import { hashSecret } from '@gw/security';

export type TokenPurpose = 'verify_email' | 'reset_password';

/** Issues a token for the user (ending earlier unused ones of the purpose) and returns it, for the link. */
export async function issueEmailToken(pool: Queryable, userId: string, purpose: TokenPurpose, validMs: number): Promise<string> {
  const token = randomBytes(32).toString('base64url');
  await pool.transaction(async (tx) => {
    await tx.query(sql.typeAlias('void')`UPDATE email_tokens SET used_at = now() WHERE user_id = ${userId} AND purpose = ${purpose} AND used_at IS NULL`);
    await tx.query(sql.typeAlias('void')`
      INSERT INTO email_tokens (token_hash, user_id, purpose, expires_at)
      VALUES (${sql.binary(hashSecret(token))}, ${userId}, ${purpose}, now() + make_interval(secs => ${validMs / 1000}))`);
  });
  return token;
}

const Owner = z.object({ user_id: z.string() });

/** The user a token is open (unused, unexpired) for, without using it up; null otherwise. */
export async function openEmailToken(pool: Queryable, token: string, purpose: TokenPurpose): Promise<string | null> {
  if (token.length > 100) return null;
  return pool.maybeOneFirst(sql.type(Owner)`
    SELECT user_id FROM email_tokens
    WHERE token_hash = ${sql.binary(hashSecret(token))} AND purpose = ${purpose} AND used_at IS NULL AND expires_at > now()`);
}

/** Uses a token up: its user once, null after (or when expired or unknown). One conditional UPDATE. */
export async function useEmailToken(pool: Queryable, token: string, purpose: TokenPurpose): Promise<string | null> {
  if (token.length > 100) return null;
  return pool.maybeOneFirst(sql.type(Owner)`
    UPDATE email_tokens SET used_at = now()
    WHERE token_hash = ${sql.binary(hashSecret(token))} AND purpose = ${purpose} AND used_at IS NULL AND expires_at > now()
    RETURNING user_id`);
}
