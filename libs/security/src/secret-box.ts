import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * Seals secrets at rest with AES-256-GCM. Sealed form: v1.<iv>.<tag>.<ciphertext> (base64url).
 * The key comes from GATEWAY_SECRET_KEY (any string; hashed to 32 bytes) or, for local runs,
 * from a key file created once with mode 0600.
 */
export class SecretBox {
  private readonly key: Buffer;

  constructor(keyMaterial: string) {
    if (keyMaterial.length < 16) throw new Error('secret key material must be at least 16 characters');
    this.key = createHash('sha256').update(keyMaterial, 'utf8').digest();
  }

  static fromConfig(key: { fromEnv: string | undefined; file: string }): SecretBox {
    if (key.fromEnv) return new SecretBox(key.fromEnv);
    const keyFile = key.file;
    if (!existsSync(keyFile)) {
      mkdirSync(dirname(keyFile), { recursive: true });
      try {
        writeFileSync(keyFile, randomBytes(32).toString('base64url'), { mode: 0o600, flag: 'wx' });
      } catch (error) {
        // Another process created it first: use theirs.
        if ((error as { code?: string }).code !== 'EEXIST') throw error;
      }
    }
    return new SecretBox(readFileSync(keyFile, 'utf8').trim());
  }

  seal(plain: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), body.toString('base64url')].join('.');
  }

  open(sealed: string): string {
    const [version, iv, tag, body] = sealed.split('.');
    if (version !== 'v1' || !iv || !tag || body === undefined) throw new Error('not a sealed secret');
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
  }
}
