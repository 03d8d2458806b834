import { createDecipheriv, createHash } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '@gw/config';
import { deriveKeyId, SEAL_USES, SecretBox, SecretKeyMissing, UnknownKeyId } from './secret-box.ts';
import { sealLegacyV1, sealLegacyV2 } from './testing.ts';

const OLD = 'old-key-material-0123456789abcdef';
const NEW = 'new-key-material-fedcba9876543210';
const OTHER = 'other-key-material-zyxwvutsrqpo';
const PLAIN = 'whsec_the-plain-secret';

const dir = mkdtempSync(join(tmpdir(), 'secret-box-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The error a call throws (fails the test when it throws none). */
function thrown(run: () => unknown): Error {
  try {
    run();
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected an error');
}

describe('SecretBox: sealed form and key ids', () => {
  it('round-trips, in the v3 form with the kid of the current key', () => {
    const box = new SecretBox(NEW);
    const sealed = box.seal(PLAIN);
    expect(sealed).not.toContain(PLAIN);
    const [version, kid, iv, tag, body, ...rest] = sealed.split('.');
    expect(version).toBe('v3');
    expect(kid).toBe(box.currentKid);
    for (const part of [kid, iv, tag, body]) expect(part).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(rest).toEqual([]);
    expect(box.open(sealed)).toBe(PLAIN);
    expect(box.open(box.seal(''))).toBe('');
  });

  it('derives the kid from the key: the same key always gets the same id, another key another', () => {
    const expected = createHash('sha256').update(`kid:${NEW}`).digest().subarray(0, 8).toString('base64url');
    expect(new SecretBox(NEW).currentKid).toBe(expected);
    expect(deriveKeyId(NEW)).toBe(expected);
    expect(new SecretBox(NEW).seal('a').split('.')[1]).toBe(new SecretBox(NEW).seal('b').split('.')[1]);
    expect(new SecretBox(OLD).currentKid).not.toBe(expected);
  });

  it('uses GATEWAY_SECRET_KEY_ID as the kid when given, and refuses one that cannot be a kid', () => {
    const box = SecretBox.fromConfig({ fromEnv: NEW, file: '/nonexistent', keyId: 'key-2026-01' });
    expect(box.currentKid).toBe('key-2026-01');
    expect(box.seal(PLAIN).startsWith('v3.key-2026-01.')).toBe(true);
    expect(() => new SecretBox(NEW, { keyId: 'has.dot' })).toThrow(/GATEWAY_SECRET_KEY_ID/);
  });

  it('opens a value by its kid with a previous key, and seals with the current key', () => {
    const sealedBefore = new SecretBox(OLD).seal(PLAIN);
    const ring = new SecretBox(NEW, { previous: [OTHER, OLD] });
    expect(ring.open(sealedBefore)).toBe(PLAIN);
    expect(ring.isCurrent(sealedBefore)).toBe(false);
    expect(ring.previousKids).toEqual([deriveKeyId(OTHER), deriveKeyId(OLD)]);
    const resealed = ring.seal(ring.open(sealedBefore));
    expect(SecretBox.keyIdOf(resealed)).toBe(deriveKeyId(NEW));
    expect(ring.isCurrent(resealed)).toBe(true);
    // The re-sealed value needs the new key alone.
    expect(new SecretBox(NEW).open(resealed)).toBe(PLAIN);
  });

  it('opens values of a previous key that had an explicit id, given as <kid>:<key>', () => {
    const sealedBefore = new SecretBox(OLD, { keyId: 'k2025' }).seal(PLAIN);
    expect(new SecretBox(NEW, { previous: [`k2025:${OLD}`] }).open(sealedBefore)).toBe(PLAIN);
    expect(() => new SecretBox(NEW, { keyId: 'k2025', previous: [`k2025:${OLD}`] })).toThrow(/k2025/);
  });

  it('still opens legacy v1 values: with the current key, then with each previous key', () => {
    expect(new SecretBox(NEW).open(sealLegacyV1(NEW, PLAIN))).toBe(PLAIN);
    const ring = new SecretBox(NEW, { previous: [OTHER, OLD] });
    expect(ring.open(sealLegacyV1(OLD, PLAIN))).toBe(PLAIN);
    expect(SecretBox.keyIdOf(sealLegacyV1(OLD, PLAIN))).toBeNull();
    expect(ring.isCurrent(sealLegacyV1(NEW, PLAIN))).toBe(false);
    expect(() => new SecretBox(NEW).open(sealLegacyV1(OLD, PLAIN))).toThrow(/v1/);
  });

  it('refuses a value whose kid no key has, naming the kid and not the value', () => {
    const sealed = new SecretBox(OLD).seal(PLAIN);
    const error = thrown(() => new SecretBox(NEW, { previous: [OTHER] }).open(sealed));
    expect(error).toBeInstanceOf(UnknownKeyId);
    expect((error as UnknownKeyId).kid).toBe(deriveKeyId(OLD));
    expect(error.message).toContain(deriveKeyId(OLD));
    expect(error.message).not.toContain(sealed.split('.')[4]);
  });

  it('refuses a tampered value, and a value whose kid was changed', () => {
    const box = new SecretBox(NEW, { previous: [OLD] });
    const sealed = box.seal(PLAIN);
    const parts = sealed.split('.');
    const flipped = Buffer.from(parts[4]!, 'base64url');
    flipped[0] = flipped[0]! ^ 1;
    expect(() => box.open([...parts.slice(0, 4), flipped.toString('base64url')].join('.'))).toThrow();
    expect(() => box.open([parts[0], deriveKeyId(OLD), ...parts.slice(2)].join('.'))).toThrow();
    expect(() => box.open('plain text')).toThrow(/not a sealed secret/);
  });
});

describe('SecretBox.fromConfig: where the key comes from', () => {
  const keyFile = join(dir, 'secret.key');
  writeFileSync(keyFile, `${OLD}\n`, { mode: 0o600 });

  it('production refuses to start without GATEWAY_SECRET_KEY, even when a key file exists', () => {
    for (const gatewayEnv of ['production', undefined] as const) {
      const error = thrown(() => SecretBox.fromConfig({ gatewayEnv, fromEnv: undefined, file: keyFile }));
      expect(error).toBeInstanceOf(SecretKeyMissing);
      expect(error.message).toContain('GATEWAY_SECRET_KEY');
      expect(error.message).toContain('openssl rand -base64 32');
    }
    // As the services build it: GATEWAY_ENV unset is production.
    const config = loadConfig({ GATEWAY_SECRET_KEY_FILE: keyFile });
    expect(config.gatewayEnv).toBe('production');
    expect(() => SecretBox.fromConfig(config.secretKey)).toThrow(SecretKeyMissing);
  });

  it('production uses GATEWAY_SECRET_KEY, with its id and the previous keys from the environment', () => {
    const config = loadConfig({ GATEWAY_SECRET_KEY: NEW, GATEWAY_SECRET_KEYS_PREVIOUS: `${OTHER}, ${OLD}` });
    const box = SecretBox.fromConfig(config.secretKey);
    expect(box.currentKid).toBe(deriveKeyId(NEW));
    expect(box.open(new SecretBox(OLD).seal(PLAIN))).toBe(PLAIN);
    expect(SecretBox.fromConfig(loadConfig({ GATEWAY_SECRET_KEY: NEW, GATEWAY_SECRET_KEY_ID: 'k1' }).secretKey).currentKid).toBe('k1');
  });

  it('a local run reads the key file, and never creates it: without it, it refuses and says to run make run', () => {
    const box = SecretBox.fromConfig(loadConfig({ GATEWAY_ENV: 'local', GATEWAY_SECRET_KEY_FILE: keyFile }).secretKey);
    expect(box.currentKid).toBe(deriveKeyId(OLD)); // the file's content, trimmed
    const missing = join(dir, 'missing', 'secret.key');
    const error = thrown(() => SecretBox.fromConfig(loadConfig({ GATEWAY_ENV: 'local', GATEWAY_SECRET_KEY_FILE: missing }).secretKey));
    expect(error).toBeInstanceOf(SecretKeyMissing);
    expect(error.message).toContain('make run');
    expect(error.message).toContain(missing);
    expect(existsSync(missing)).toBe(false);
    // GATEWAY_SECRET_KEY, when set, wins over the file in a local run too.
    expect(SecretBox.fromConfig(loadConfig({ GATEWAY_ENV: 'local', GATEWAY_SECRET_KEY: NEW, GATEWAY_SECRET_KEY_FILE: missing }).secretKey).currentKid).toBe(deriveKeyId(NEW));
  });

  it('refuses a key shorter than 16 characters, wherever it comes from', () => {
    const shortFile = join(dir, 'short.key');
    writeFileSync(shortFile, 'short-key-15chr', { mode: 0o600 });
    expect(() => SecretBox.fromConfig({ fromEnv: 'short-key-15chr', file: keyFile })).toThrow(/GATEWAY_SECRET_KEY.*16/);
    expect(() => SecretBox.fromConfig({ gatewayEnv: 'local', fromEnv: undefined, file: shortFile })).toThrow(/16/);
    expect(() => SecretBox.fromConfig({ fromEnv: NEW, file: keyFile, previous: ['short-key-15chr'] })).toThrow(/GATEWAY_SECRET_KEYS_PREVIOUS.*16/);
    expect(() => new SecretBox('short-key-15chr')).toThrow(/16/);
    expect(SecretBox.fromConfig({ fromEnv: 'sixteen-chars-ok', file: keyFile }).currentKid).toBe(deriveKeyId('sixteen-chars-ok'));
  });

  it('refuses a GATEWAY_ENV other than local or production', () => {
    expect(() => loadConfig({ GATEWAY_ENV: 'staging' })).toThrow(/GATEWAY_ENV/);
    expect(loadConfig({ GATEWAY_ENV: 'local' }).secretKey.gatewayEnv).toBe('local');
  });

  it('never puts key material, a sealed value or a plain secret in an error message', () => {
    const shortKey = 'tooshort-secret';
    const shortFile = join(dir, 'short2.key');
    writeFileSync(shortFile, shortKey, { mode: 0o600 });
    const sealedOld = new SecretBox(OLD).seal(PLAIN);
    const sealedNew = new SecretBox(NEW).seal(PLAIN);
    const errors = [
      thrown(() => SecretBox.fromConfig({ fromEnv: shortKey, file: keyFile })),
      thrown(() => SecretBox.fromConfig({ gatewayEnv: 'local', fromEnv: undefined, file: shortFile })),
      thrown(() => SecretBox.fromConfig({ fromEnv: NEW, file: keyFile, previous: [OLD, shortKey] })),
      thrown(() => SecretBox.fromConfig({ fromEnv: undefined, file: keyFile })),
      thrown(() => new SecretBox(NEW, { keyId: 'k1', previous: [`k1:${OLD}`] })),
      thrown(() => new SecretBox(NEW).open(sealedOld)),
      thrown(() => new SecretBox(OTHER, { keyId: deriveKeyId(NEW) }).open(sealedNew)),
      thrown(() => new SecretBox(NEW).open(sealLegacyV1(OLD, PLAIN))),
    ];
    for (const error of errors) {
      for (const secret of [OLD, NEW, OTHER, shortKey, PLAIN, sealedOld, sealedNew, ...sealedOld.split('.').slice(2), ...sealedNew.split('.').slice(2)]) {
        expect(error.message).not.toContain(secret);
        expect(String(error.stack)).not.toContain(secret);
      }
    }
  });
});

describe('SecretBox.deriveKey', () => {
  it('gives 32 bytes that depend on the key and the purpose, the same each time', () => {
    const box = new SecretBox('k'.repeat(32));
    const csrf = box.deriveKey('dashboard csrf');
    expect(csrf).toHaveLength(32);
    expect(box.deriveKey('dashboard csrf').equals(csrf)).toBe(true);
    expect(box.deriveKey('another purpose').equals(csrf)).toBe(false);
    expect(new SecretBox('j'.repeat(32)).deriveKey('dashboard csrf').equals(csrf)).toBe(false);
  });
});

describe('SecretBox: bound to a use, keys by HKDF (v3)', () => {
  const MATERIAL = 'use-binding-key-material-0123456789';
  const box = new SecretBox(MATERIAL);

  it('a value sealed for one use does not open for another, nor without one', () => {
    const sealed = box.seal('the-manager-apikey', SEAL_USES.managerApiKey('ins_a'));
    expect(box.open(sealed, SEAL_USES.managerApiKey('ins_a'))).toBe('the-manager-apikey');
    expect(() => box.open(sealed, SEAL_USES.managerApiKey('ins_b'))).toThrow(/does not open with that key for this use/);
    expect(() => box.open(sealed)).toThrow(/for this use/);
    expect(() => box.open(box.seal('unbound'), SEAL_USES.managerApiKey('ins_a'))).toThrow(/for this use/);
  });

  it('the key is HKDF of the material, not its SHA-256: a v3 value under the SHA-256 key does not open', () => {
    const sealed = box.seal('x', 'u');
    const [header, iv, tag, body] = [sealed.split('.').slice(0, 2).join('.'), ...sealed.split('.').slice(2)] as [string, string, string, string];
    const decipher = createDecipheriv('aes-256-gcm', createHash('sha256').update(MATERIAL).digest(), Buffer.from(iv, 'base64url'));
    decipher.setAAD(Buffer.from(`${header}:u`));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    decipher.update(Buffer.from(body, 'base64url'));
    expect(() => decipher.final()).toThrow();
  });

  it('values of the older forms (v2 with kid, v1) still open, whatever the use, and are not current', () => {
    const v2 = sealLegacyV2(MATERIAL, 'old-v2');
    const v1 = sealLegacyV1(MATERIAL, 'old-v1');
    expect(box.open(v2)).toBe('old-v2');
    expect(box.open(v2, SEAL_USES.managerApiKey('ins_a'))).toBe('old-v2');
    expect(box.open(v1, SEAL_USES.managerApiKey('ins_a'))).toBe('old-v1');
    expect(SecretBox.keyIdOf(v2)).toBe(box.currentKid);
    expect(box.isCurrent(v2)).toBe(false);
    expect(box.isCurrent(v1)).toBe(false);
    expect(box.isCurrent(box.seal('new', 'u'))).toBe(true);
  });

  it('a column bound later opens its old unbound v3 values, but not a value sealed for another row or use', () => {
    const use = SEAL_USES.totpSecret('usr_a');
    const unbound = box.seal('old-totp');
    expect(box.openFormerlyUnbound(unbound, use)).toBe('old-totp');
    expect(box.openFormerlyUnbound(box.seal('bound', use), use)).toBe('bound');
    expect(box.openFormerlyUnbound(sealLegacyV2(MATERIAL, 'old-v2'), use)).toBe('old-v2');
    expect(() => box.openFormerlyUnbound(box.seal('other', SEAL_USES.totpSecret('usr_b')), use)).toThrow(/for this use/);
    expect(() => box.openFormerlyUnbound(box.seal('other', SEAL_USES.webhookSigningSecret('usr_a')), use)).toThrow(/for this use/);
    // Unbound or bound elsewhere is not current: rotate re-seals it.
    expect(box.isCurrent(unbound, use)).toBe(false);
    expect(box.isCurrent(box.seal('other', SEAL_USES.totpSecret('usr_b')), use)).toBe(false);
    expect(box.isCurrent(box.seal('bound', use), use)).toBe(true);
  });
});
