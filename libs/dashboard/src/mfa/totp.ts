// TOTP (RFC 6238, 6 digits, 30 s) through otplib, and recovery codes. The TOTP secret is sealed
// with the gateway's secret key (it must be read back to check a code). Each TOTP code works once
// per user: the time step of the last accepted code is kept in `users.totp_last_step`, and a code
// of that step or an earlier one is refused (ASVS 2.8.4). Recovery codes carry 120 random bits
// and are stored as SHA-256 hashes (ASVS 2.6.2: at >= 112 bits an approved unsalted hash is
// enough); each works once.
import { randomBytes } from 'node:crypto';
import { generateSecret, generateURI, verify } from 'otplib';
import QRCode from 'qrcode';
import { sql, z, type Queryable } from '@gw/db';
import { hashSecret, SEAL_USES, type SecretBox } from '@gw/security';

export const ISSUER = 'Chat Gateway';
export const RECOVERY_CODES = 10;
/** Bits of randomness in a recovery code made now (15 bytes, 24 base32 characters). */
export const RECOVERY_CODE_BITS = 120;

export const newTotpSecret = () => generateSecret();

/** The otpauth:// URI an authenticator app reads, and the same as a QR image (data: URL). */
export async function enrolmentQr(email: string, secret: string): Promise<{ uri: string; qr: string }> {
  const uri = generateURI({ issuer: ISSUER, label: email, secret });
  return { uri, qr: await QRCode.toDataURL(uri, { margin: 1, width: 220 }) };
}

/**
 * The time step of a code from the authenticator (the current period or the one either side, for
 * clock drift), or null when it is not one. Says nothing about whether the step was used before.
 */
export async function codeStep(secret: string, code: string): Promise<number | null> {
  const token = code.replace(/\s+/g, '');
  if (!/^\d{6}$/.test(token)) return null;
  const result = await verify({ secret, token, epochTolerance: 30 });
  if (!result.valid) return null;
  // The TOTP result carries its time step (otplib 13: `timeStep`); the shared result type does not say so.
  return (result as { timeStep?: number }).timeStep ?? null;
}

/** Whether a code is one of the authenticator's current ones (enrolment: nothing is stored yet). */
export async function codeMatches(secret: string, code: string): Promise<boolean> {
  return (await codeStep(secret, code)) !== null;
}

/**
 * Uses up a TOTP time step for a user: true when `step` is later than every step accepted before
 * (and records it), false otherwise. One conditional UPDATE, so two requests carrying the same
 * code cannot both pass.
 */
export async function claimTotpStep(pool: Queryable, userId: string, step: number): Promise<boolean> {
  const claimed = await pool.maybeOne(sql.type(z.object({ id: z.string() }))`
    UPDATE users SET totp_last_step = ${step}
    WHERE id = ${userId} AND (totp_last_step IS NULL OR totp_last_step < ${step})
    RETURNING id`);
  return claimed !== null;
}

const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';

/** Ten codes of 120 random bits (24 base32 characters in groups of 4), shown once; each can stand in for a TOTP code once. */
export function newRecoveryCodes(): string[] {
  return Array.from({ length: RECOVERY_CODES }, () => {
    const bytes = randomBytes(RECOVERY_CODE_BITS / 8);
    let bits = 0;
    let value = 0;
    let out = '';
    for (const byte of bytes) {
      value = (value << 8) | byte;
      bits += 8;
      while (bits >= 5) {
        out += BASE32[(value >>> (bits - 5)) & 31];
        bits -= 5;
      }
    }
    return out.match(/.{4}/g)!.join('-');
  });
}

/** Case and spaces do not matter; the hyphens are part of the code (as it was hashed). */
const normaliseCode = (code: string) => code.replace(/\s+/g, '').toLowerCase();

/** A recovery code as made now (6 groups of 4), or as made before 1700000002500 (5-5). */
const RECOVERY_CODE_SHAPE = /^(?:[a-z2-7]{4}(?:-[a-z2-7]{4}){5}|[a-z0-9]{5}-[a-z0-9]{5})$/;

export const looksLikeRecoveryCode = (code: string) => RECOVERY_CODE_SHAPE.test(normaliseCode(code));

/** Saves a confirmed enrolment: the sealed secret, the step its first code used, and the recovery codes' hashes (replacing any earlier ones). */
export async function saveEnrolment(pool: Queryable, box: SecretBox, userId: string, secret: string, codes: string[], usedStep: number | null = null): Promise<void> {
  await pool.transaction(async (tx) => {
    await tx.query(sql.typeAlias('void')`UPDATE users SET totp_secret_enc = ${box.seal(secret, SEAL_USES.totpSecret(userId))}, mfa_enrolled_at = now(), totp_last_step = ${usedStep} WHERE id = ${userId}`);
    await tx.query(sql.typeAlias('void')`DELETE FROM recovery_codes WHERE user_id = ${userId}`);
    for (const code of codes) {
      await tx.query(sql.typeAlias('void')`INSERT INTO recovery_codes (user_id, code_hash, bits) VALUES (${userId}, ${sql.binary(hashSecret(normaliseCode(code)))}, ${RECOVERY_CODE_BITS})`);
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

/**
 * A second factor for a user: a TOTP code of a step not used before (the step is then used up),
 * or else one of the unused recovery codes (then used up).
 */
export async function secondFactorMatches(pool: Queryable, box: SecretBox, user: { id: string; totp_secret_enc: string | null }, code: string): Promise<boolean> {
  if (!user.totp_secret_enc) return false;
  const step = await codeStep(box.openFormerlyUnbound(user.totp_secret_enc, SEAL_USES.totpSecret(user.id)), code);
  if (step !== null) return claimTotpStep(pool, user.id, step);
  return looksLikeRecoveryCode(code) && useRecoveryCode(pool, user.id, code);
}
