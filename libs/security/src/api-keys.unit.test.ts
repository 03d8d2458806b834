import { describe, expect, it } from 'vitest';
import { generateApiKey, parseApiKey, secretMatches } from './api-keys.ts';
import { SecretBox } from './secret-box.ts';

describe('api keys', () => {
  it('generates a parseable key whose secret matches only its own hash', () => {
    const key = generateApiKey();
    const parsed = parseApiKey(key.token);
    expect(parsed?.keyId).toBe(key.keyId);
    expect(secretMatches(parsed!.secret, key.secretHash)).toBe(true);
    const other = generateApiKey();
    expect(secretMatches(parsed!.secret, other.secretHash)).toBe(false);
    expect(secretMatches(parsed!.secret, null)).toBe(false);
  });

  it('rejects malformed keys', () => {
    for (const bad of ['', 'gw_', 'Bearer x', 'gw_0123456789abcdef_short', `gw_XYZ_${'a'.repeat(43)}`]) {
      expect(parseApiKey(bad)).toBeNull();
    }
  });

  it('never repeats a key', () => {
    const tokens = new Set(Array.from({ length: 200 }, () => generateApiKey().token));
    expect(tokens.size).toBe(200);
  });
});

describe('secret box', () => {
  it('round-trips and refuses a tampered or foreign ciphertext', () => {
    const box = new SecretBox('a-test-key-material-of-enough-length');
    const sealed = box.seal('manager-api-key');
    expect(sealed).not.toContain('manager-api-key');
    expect(box.open(sealed)).toBe('manager-api-key');
    const tampered = sealed.slice(0, -2) + (sealed.endsWith('A') ? 'BB' : 'AA');
    expect(() => box.open(tampered)).toThrow();
    expect(() => new SecretBox('another-key-material-xxxxxxxx').open(sealed)).toThrow();
  });
});
