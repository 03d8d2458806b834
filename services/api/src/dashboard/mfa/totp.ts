// TOTP (RFC 6238, 6 digits, 30 s) through otplib, and recovery codes. The TOTP secret is sealed
// with the gateway's secret key (it must be read back to check a code); recovery codes are
// stored as SHA-256 hashes and each works once.
import { randomBytes } from 'node:crypto';
import { generateSecret, generateURI, verify } from 'otplib';
import QRCode from 'qrcode';
import { sql, z, type Queryable } from '@gw/db';
import { hashSecret, type SecretBox } from '@gw/security';

export const ISSUER = 'Chat Gateway';
export const RECOVERY_CODES = 10;

export const newTotpSecret = () => generateSecret();

/** The otpauth:// URI an authenticator app reads, and the same as a QR image (data: URL). */
export async function enrolmentQr(email: string, secret: string): Promise<{ uri: string; qr: string }> {
  const uri = generateURI({ issuer: ISSUER, label: email, secret });
  return { uri, qr: await QRCode.toDataURL(uri, { margin: 1, width: 220 }) };
}

/** A code from the authenticator: the current period or the one either side (clock drift). */
export async function codeMatches(secret: string, code: string): Promise<boolean> {
  const token = code.replace(/\s+/g, '');
  if (!/^\d{6}$/.test(token)) return false;
  const result = await verify({ secret, token, epochTolerance: 30 });
  return result.valid;
}

/** Ten codes of 10 characters, shown once; each can stand in for a TOTP code once. */
export function newRecoveryCodes(): string[] {
  return Array.from({ length: RECOVERY_CODES }, () => {
    const raw = randomBytes(8).toString('base64url').replace(/[-_]/g, 'x').slice(0, 10).toLowerCase();
    return `${raw.slice(0, 5)}-${raw.slice(5)}`;
  });
}

const normaliseCode = (code: string) => code.trim().toLowerCase();

/** Saves a confirmed enrolment: the sealed secret and the recovery codes' hashes (replacing any earlier ones). */
export async function saveEnrolment(pool: Queryable, box: SecretBox, userId: string, secret: string, codes: string[]): Promise<void> {
  await pool.transaction(async (tx) => {
    await tx.query(sql.typeAlias('void')`UPDATE users SET totp_secret_enc = ${box.seal(secret)}, mfa_enrolled_at = now() WHERE id = ${userId}`);
    await tx.query(sql.typeAlias('void')`DELETE FROM recovery_codes WHERE user_id = ${userId}`);
    for (const code of codes) {
      await tx.query(sql.typeAlias('void')`INSERT INTO recovery_codes (user_id, code_hash) VALUES (${userId}, ${sql.binary(hashSecret(normaliseCode(code)))})`);
    }
  });
}

/** Uses up a recovery code: true once for each code, false after (or for a wrong one). */
export async function useRecoveryCode(pool: Queryable, userId: string, code: string): Promise<boolean> {
  const used = await pool.maybeOne(sql.type(z.object({ user_id: z.string() }))`
    UPDATE recovery_codes SET used_at = now()
    WHERE user_id = ${userId} AND code_hash = ${sql.binary(hashSecret(normaliseCode(code)))} AND used_at IS NULL
    RETURNING user_id`);
  return used !== null;
}

/** A second factor for a user: a TOTP code, or else one of the recovery codes. */
export async function secondFactorMatches(pool: Queryable, box: SecretBox, user: { id: string; totp_secret_enc: string | null }, code: string): Promise<boolean> {
  if (!user.totp_secret_enc) return false;
  if (await codeMatches(box.open(user.totp_secret_enc), code)) return true;
  return /^[a-z0-9]{5}-[a-z0-9]{5}$/i.test(code.trim()) && useRecoveryCode(pool, user.id, code);
}
