import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';

/**
 * Seals secrets at rest with AES-256-GCM under a keyring (docs/decisions.md, "Secrets at rest").
 *
 * Sealed form: `v3.<kid>.<iv>.<tag>.<ciphertext>` (base64url parts). The associated data is
 * `v3.<kid>:<use>`, where `use` names what the value is for (its column and row, {@link SEAL_USES}):
 * a value copied to another row or column does not open there. The AES key is HKDF-SHA256 of the
 * key material. `seal` always uses the current key; `open` picks the key by kid.
 *
 * Older forms still open, the old way, whatever the use (and `gatewayctl secrets rotate`, or the
 * next write, re-seals them as v3): `v2.<kid>.…` (associated data `v2.<kid>`, key SHA-256 of the
 * material) and `v1.<iv>.<tag>.<ciphertext>` (no kid: tried with every key of the keyring).
 *
 * A key is any string of at least 16 characters. Its id is GATEWAY_SECRET_KEY_ID
 * when given, else derived from it (the same key always gets the same id). No message this class
 * produces contains key material or a sealed value: they name kids, environment variables and files.
 */
export class SecretBox {
  /** The id of the key `seal` uses. */
  readonly currentKid: string;
  /** SHA-256 of the current key material: the v1/v2 key, and what {@link deriveKey} derives from. */
  private readonly current: Buffer;
  /** Every key by its id, the current one first (Map keeps insertion order): SHA-256 of its material (v1, v2). */
  private readonly keys = new Map<string, Buffer>();
  /** The same keys by id, derived by HKDF (v3). */
  private readonly sealingKeys = new Map<string, Buffer>();

  /**
   * @param keyMaterial the current key
   * @param options.keyId the current key's id (default: derived from the key)
   * @param options.previous keys of earlier rotations, each `<key>` or `<kid>:<key>` (see {@link parseKeyEntry})
   */
  constructor(keyMaterial: string, options: { keyId?: string; previous?: readonly string[] } = {}) {
    if (keyMaterial.length < MIN_KEY_LENGTH) throw new Error(`secret key material must be at least ${MIN_KEY_LENGTH} characters`);
    this.current = keyBytes(keyMaterial);
    this.currentKid = options.keyId === undefined ? deriveKeyId(keyMaterial) : checkedKid(options.keyId, 'GATEWAY_SECRET_KEY_ID');
    this.keys.set(this.currentKid, this.current);
    this.sealingKeys.set(this.currentKid, sealingKey(keyMaterial));
    for (const [i, entry] of (options.previous ?? []).entries()) {
      const { kid, material } = parseKeyEntry(entry);
      checkLength(material, `Key ${i + 1} of GATEWAY_SECRET_KEYS_PREVIOUS`);
      const key = keyBytes(material);
      const known = this.keys.get(kid);
      if (known && !known.equals(key)) {
        throw new Error(`Two different keys have the id ${kid} (GATEWAY_SECRET_KEY_ID and GATEWAY_SECRET_KEYS_PREVIOUS): give each key its own id.`);
      }
      this.keys.set(kid, key);
      this.sealingKeys.set(kid, sealingKey(material));
    }
  }

  /**
   * The keyring the configuration names. Production (GATEWAY_ENV unset or `production`) refuses to
   * start without GATEWAY_SECRET_KEY; a local run falls back to the key file that `make run`
   * (deploy/local/services.sh) creates once. Nothing here creates a key.
   */
  static fromConfig(config: SecretKeyConfig): SecretBox {
    const options = { keyId: config.keyId, previous: config.previous ?? [] };
    if (config.fromEnv) {
      checkLength(config.fromEnv, 'GATEWAY_SECRET_KEY');
      return new SecretBox(config.fromEnv, options);
    }
    if ((config.gatewayEnv ?? 'production') !== 'local') {
      throw new SecretKeyMissing(
        'GATEWAY_SECRET_KEY is not set. Outside local runs (GATEWAY_ENV=production, the default) the gateway refuses to start without it, ' +
          'so that every service seals and opens secrets with the same key. Generate one with `openssl rand -base64 32` and give the same ' +
          'value to every service and to gatewayctl. For a local run, set GATEWAY_ENV=local to use the key file that `make run` creates.',
      );
    }
    if (!existsSync(config.file)) {
      throw new SecretKeyMissing(
        `No secret key: GATEWAY_ENV=local reads the key file ${config.file}, which does not exist. Run \`make run\` (deploy/local/services.sh ` +
          `creates it once), or create it yourself: (umask 077; head -c 32 /dev/urandom | base64 > ${config.file}). Or set GATEWAY_SECRET_KEY.`,
      );
    }
    const material = readFileSync(config.file, 'utf8').trim();
    checkLength(material, `The key in ${config.file}`);
    return new SecretBox(material, options);
  }

  /** The ids of the keys that open values besides the current one, in configuration order. */
  get previousKids(): string[] {
    return [...this.keys.keys()].filter((kid) => kid !== this.currentKid);
  }

  /**
   * A key for another purpose (e.g. the dashboard's CSRF tokens), derived from the current key
   * by HKDF-SHA256 with the purpose as its info: the same key and purpose always give the same
   * bytes, and no derived key reveals the key or another purpose's key.
   */
  deriveKey(purpose: string): Buffer {
    return Buffer.from(hkdfSync('sha256', this.current, Buffer.alloc(0), purpose, 32));
  }

  /**
   * Seals `plain` with the current key, bound to `use` (e.g. `SEAL_USES.managerApiKey(id)`): it
   * opens only with the same use. Without one, it is bound to "no use" and opens only without one.
   */
  seal(plain: string, use = ''): string {
    const iv = randomBytes(12);
    const header = `v3.${this.currentKid}`;
    const cipher = createCipheriv('aes-256-gcm', this.sealingKeys.get(this.currentKid)!, iv);
    cipher.setAAD(Buffer.from(`${header}:${use}`, 'utf8'));
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return [header, iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), body.toString('base64url')].join('.');
  }

  /** The plain text of a value sealed for `use` (v3); v1 and v2 values, sealed before uses existed, open whatever the use. */
  open(sealed: string, use = ''): string {
    const parsed = parseSealed(sealed);
    if (!parsed) throw new Error('not a sealed secret');
    if (parsed.version === 'v1') {
      for (const key of this.keys.values()) {
        const plain = tryDecrypt(key, parsed, null);
        if (plain !== undefined) return plain;
      }
      throw new Error(`a sealed value without a key id (v1) opens with none of the ${this.keys.size} keys of the keyring (current ${this.currentKid})`);
    }
    const key = (parsed.version === 'v3' ? this.sealingKeys : this.keys).get(parsed.kid);
    if (!key) throw new UnknownKeyId(parsed.kid);
    const aad = parsed.version === 'v3' ? `v3.${parsed.kid}:${use}` : `v2.${parsed.kid}`;
    const plain = tryDecrypt(key, parsed, aad);
    if (plain === undefined) {
      throw new Error(`a sealed value with key id ${parsed.kid} does not open with that key${parsed.version === 'v3' ? ' for this use (sealed for another, altered,' : ' (altered,'} or another key was given that id)`);
    }
    return plain;
  }

  /**
   * `open` for a column that was sealed without a use before its code bound it (the PBX HMAC secret,
   * the webhook signing secrets, the TOTP secret; issue 25): a v3 value sealed for no use still opens, until the next write or
   * `gatewayctl secrets rotate` seals it bound. A value sealed for another use still does not open.
   */
  openFormerlyUnbound(sealed: string, use: string): string {
    try {
      return this.open(sealed, use);
    } catch (error) {
      if (parseSealed(sealed)?.version !== 'v3' || use === '') throw error;
      try {
        return this.open(sealed, '');
      } catch {
        throw error; // the message about the use, not about "no use"
      }
    }
  }

  /**
   * True when the value is sealed in the current form (v3) with the current key (nothing for a
   * rotation to do); given a use, only when it is also sealed for that use (a v3 value sealed for
   * no use before its column was bound is not current).
   */
  isCurrent(sealed: string, use?: string): boolean {
    const parsed = parseSealed(sealed);
    if (parsed?.version !== 'v3' || parsed.kid !== this.currentKid) return false;
    return use === undefined || tryDecrypt(this.sealingKeys.get(parsed.kid)!, parsed, `v3.${parsed.kid}:${use}`) !== undefined;
  }

  /** Whether a key of this keyring carries the id. */
  knows(kid: string): boolean {
    return this.keys.has(kid);
  }

  /**
   * The key id a sealed value names: its kid (v2, v3), `null` for a value sealed before key ids (v1),
   * `undefined` when the text is not a sealed value at all.
   */
  static keyIdOf(sealed: string): string | null | undefined {
    const parsed = parseSealed(sealed);
    return parsed ? (parsed.version === 'v1' ? null : parsed.kid) : undefined;
  }

  /** The sealed form's version (`v1`, `v2`, `v3`), `undefined` when the text is not a sealed value. */
  static versionOf(sealed: string): 'v1' | 'v2' | 'v3' | undefined {
    return parseSealed(sealed)?.version;
  }
}

/** What {@link SecretBox.fromConfig} reads (libs/config `secretKey`). */
export interface SecretKeyConfig {
  /** `production` (default) requires `fromEnv`; `local` falls back to `file`. */
  gatewayEnv?: 'local' | 'production';
  /** GATEWAY_SECRET_KEY */
  fromEnv: string | undefined;
  /** GATEWAY_SECRET_KEY_FILE (local runs only) */
  file: string;
  /** GATEWAY_SECRET_KEY_ID */
  keyId?: string | undefined;
  /** GATEWAY_SECRET_KEYS_PREVIOUS, one entry per key */
  previous?: readonly string[];
}

/** No key is configured: the process must not start. */
export class SecretKeyMissing extends Error {
  override readonly name = 'SecretKeyMissing';
}

/** A sealed value names a key id that no key of the keyring has. */
export class UnknownKeyId extends Error {
  override readonly name = 'UnknownKeyId';
  constructor(readonly kid: string) {
    super(`a sealed value names key id ${kid}, which no configured key has (add that key to GATEWAY_SECRET_KEYS_PREVIOUS)`);
  }
}

const MIN_KEY_LENGTH = 16;
const KID = /^[A-Za-z0-9_-]{1,64}$/;

/** The id of a key without an explicit one: the first 8 bytes of SHA-256("kid:" + key), base64url. */
export function deriveKeyId(keyMaterial: string): string {
  return createHash('sha256').update(`kid:${keyMaterial}`, 'utf8').digest().subarray(0, 8).toString('base64url');
}

/**
 * One entry of GATEWAY_SECRET_KEYS_PREVIOUS: `<key>`, whose id is derived from it, or `<kid>:<key>`
 * for a key that had an explicit GATEWAY_SECRET_KEY_ID. Generated keys (base64) never contain `:`;
 * a key that does is written with its id in front (`gatewayctl secrets status` shows the ids).
 */
function parseKeyEntry(entry: string): { kid: string; material: string } {
  const colon = entry.indexOf(':');
  if (colon > 0 && KID.test(entry.slice(0, colon))) return { kid: entry.slice(0, colon), material: entry.slice(colon + 1) };
  return { kid: deriveKeyId(entry), material: entry };
}

function checkedKid(kid: string, source: string): string {
  if (!KID.test(kid)) throw new Error(`${source} must be 1 to 64 letters, digits, '_' or '-'.`);
  return kid;
}

function checkLength(material: string, what: string): void {
  if (material.length < MIN_KEY_LENGTH) throw new Error(`${what} is shorter than ${MIN_KEY_LENGTH} characters; generate one with \`openssl rand -base64 32\`.`);
}

/** The v1/v2 key: plain SHA-256 of the material (kept to open values sealed that way). */
function keyBytes(material: string): Buffer {
  return createHash('sha256').update(material, 'utf8').digest();
}

/** The v3 key: HKDF-SHA256 of the material, with its own salt and info (no other derived key equals it). */
function sealingKey(material: string): Buffer {
  return Buffer.from(hkdfSync('sha256', Buffer.from(material, 'utf8'), 'chat-gateway secret-box', 'aes-256-gcm v3', 32));
}

type Parsed = { version: 'v1'; iv: string; tag: string; body: string } | { version: 'v2' | 'v3'; kid: string; iv: string; tag: string; body: string };

function parseSealed(sealed: string): Parsed | undefined {
  const parts = sealed.split('.');
  if (parts[0] === 'v1' && parts.length === 4 && parts[1] && parts[2]) return { version: 'v1', iv: parts[1], tag: parts[2], body: parts[3]! };
  if ((parts[0] === 'v2' || parts[0] === 'v3') && parts.length === 5 && parts[1] && KID.test(parts[1]) && parts[2] && parts[3]) {
    return { version: parts[0], kid: parts[1], iv: parts[2], tag: parts[3], body: parts[4]! };
  }
  return undefined;
}

/** The plain text, or undefined when this key (and associated data) does not open the value (GCM authentication fails). */
function tryDecrypt(key: Buffer, parsed: Parsed, aad: string | null): string | undefined {
  try {
    // A full 16-byte tag only: a truncated one would weaken the authentication.
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(parsed.iv, 'base64url'), { authTagLength: 16 });
    if (aad !== null) decipher.setAAD(Buffer.from(aad, 'utf8'));
    decipher.setAuthTag(Buffer.from(parsed.tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(parsed.body, 'base64url')), decipher.final()]).toString('utf8');
  } catch {
    return undefined;
  }
}

/**
 * What each sealed value is for: the associated data it is sealed with (table.column:row). Writers
 * and readers of a column, and `gatewayctl secrets rotate`, take it from here (docs/decisions.md
 * "Secrets at rest: bound to their use").
 */
export const SEAL_USES = {
  managerApiKey: (instanceId: string) => `instances.manager_api_key:${instanceId}`,
  pbxHmacSecret: (integrationId: string | number) => `pbx_integrations.hmac_secret:${integrationId}`,
  /**
   * Both webhook_endpoints columns (signing_secret_enc and previous_signing_secret_enc): rotation
   * moves the sealed value from one to the other in SQL, so it must open in either.
   */
  webhookSigningSecret: (instanceId: string) => `webhook_endpoints.signing_secret:${instanceId}`,
  totpSecret: (userId: string) => `users.totp_secret:${userId}`,
} as const;
// instances.manager_api_key was bound when v3 came, so no v3 value of it is sealed for no use: its
// readers open with `open`; the others, bound later, with `openFormerlyUnbound`.

