import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

// Format: gw_<key id: 16 lowercase hex>_<secret: 32 random bytes, base64url>. The key id is a
// public lookup handle; only a hash of the secret is stored, and the whole key is shown once.
const KEY_PATTERN = /^gw_([0-9a-f]{16})_([A-Za-z0-9_-]{43})$/;

export interface GeneratedApiKey {
  keyId: string;
  /** The full key to hand to the customer once. */
  token: string;
  secretHash: Buffer;
}

export function hashSecret(secret: string): Buffer {
  return createHash('sha256').update(secret, 'utf8').digest();
}

export function generateApiKey(): GeneratedApiKey {
  const keyId = randomBytes(8).toString('hex');
  const secret = randomBytes(32).toString('base64url');
  return { keyId, token: `gw_${keyId}_${secret}`, secretHash: hashSecret(secret) };
}

export function parseApiKey(token: string): { keyId: string; secret: string } | null {
  const match = KEY_PATTERN.exec(token);
  return match ? { keyId: match[1]!, secret: match[2]! } : null;
}

const DUMMY_HASH = hashSecret('no-such-key');

/** Constant-time comparison; pass null for an unknown key so it costs the same as a wrong one. */
export function secretMatches(secret: string, storedHash: Buffer | null): boolean {
  const expected = storedHash ?? DUMMY_HASH;
  const actual = hashSecret(secret);
  return timingSafeEqual(actual, expected) && storedHash !== null;
}
