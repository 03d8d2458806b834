import { createCipheriv, createHash, randomBytes } from 'node:crypto';
import { deriveKeyId } from './secret-box.ts';

/**
 * For tests: a value sealed the way SecretBox sealed before key ids existed
 * (`v1.<iv>.<tag>.<ciphertext>`, AES-256-GCM under SHA-256 of the key, no associated data).
 */
export function sealLegacyV1(keyMaterial: string, plain: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', createHash('sha256').update(keyMaterial, 'utf8').digest(), iv);
  const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), body.toString('base64url')].join('.');
}

/** For tests: a value sealed the way SecretBox sealed before uses (`v2.<kid>.…`, SHA-256 key, associated data `v2.<kid>`). */
export function sealLegacyV2(keyMaterial: string, plain: string): string {
  const kid = deriveKeyId(keyMaterial);
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', createHash('sha256').update(keyMaterial, 'utf8').digest(), iv);
  cipher.setAAD(Buffer.from(`v2.${kid}`, 'utf8'));
  const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return [`v2.${kid}`, iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), body.toString('base64url')].join('.');
}
