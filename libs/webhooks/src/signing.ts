import { createHash, createHmac, createSecretKey, randomBytes, timingSafeEqual, type KeyObject } from 'node:crypto';

/**
 * Signing of outgoing customer webhooks, two ways side by side (docs/webhooks.md, "Signatures"):
 *
 * 1. The contract's header (spec 6.1, 6.2), unchanged:
 *    X-Chat-Gateway-Signature = "sha256=" + hex(HMAC-SHA256(key = signing secret as UTF-8, `${timestamp}.${rawBody}`))
 * 2. Standard Webhooks (github.com/standard-webhooks/standard-webhooks, spec/standard-webhooks.md,
 *    "Signature scheme" and "Webhook headers"): webhook-id, webhook-timestamp and
 *    webhook-signature = "v1," + base64(HMAC-SHA256(key, `${id}.${timestamp}.${rawBody}`)), where
 *    key is the 32 random bytes our "whsec_" + base64url secret encodes; the same key written the
 *    standard way ("whsec_" + base64) is what a Standard Webhooks library is given
 *    (standardWebhooksSecret). Unlike the contract's header, it covers the delivery id, so a
 *    captured post cannot be replayed under another id.
 *
 * The timestamp is the Unix time in seconds of the attempt (not of the event), so every retry is
 * signed afresh and a receiver can refuse stale replays. The delivery id stays the same on every
 * retry of one event to one endpoint, so a receiver can deduplicate.
 *
 * During a secret rotation's overlap (SigningSecrets.previous) both secrets sign: webhook-signature
 * carries both "v1," signatures (space separated, as the standard allows), and the contract's
 * single-valued header carries the previous secret's, the one a receiver that has not switched yet
 * holds (docs/decisions.md, "Webhook secret rotation").
 */

export const WEBHOOK_HEADERS = {
  event: 'X-Chat-Gateway-Event',
  timestamp: 'X-Chat-Gateway-Timestamp',
  signature: 'X-Chat-Gateway-Signature',
  delivery: 'X-Chat-Gateway-Delivery',
  attempt: 'X-Chat-Gateway-Attempt',
} as const;

/** Standard Webhooks headers (spec/standard-webhooks.md, "Webhook headers"), lower case as the spec writes them. */
export const STANDARD_WEBHOOK_HEADERS = {
  id: 'webhook-id',
  timestamp: 'webhook-timestamp',
  signature: 'webhook-signature',
} as const;

export const STANDARD_SIGNATURE_VERSION = 'v1';
/** The standard's symmetric key size bounds (spec: "Between 24 bytes (192 bits) and 64 bytes (512 bits)"). */
const STANDARD_KEY_MIN_BYTES = 24;
const STANDARD_KEY_MAX_BYTES = 64;

export const SIGNATURE_PREFIX = 'sha256=';
export const SIGNING_SECRET_PREFIX = 'whsec_';
export const DELIVERY_ID_PREFIX = 'whd_';
export const WEBHOOK_USER_AGENT = 'ChatGateway-Webhooks/1.0';
/** Default replay window a receiver should apply to the timestamp (documented, used by verify). */
export const DEFAULT_SIGNATURE_TOLERANCE_SECONDS = 300;

function assertTimestamp(timestampSeconds: number): void {
  if (!Number.isSafeInteger(timestampSeconds) || timestampSeconds < 0) {
    throw new TypeError(`timestamp must be a non-negative integer number of Unix seconds, got ${timestampSeconds}`);
  }
}

/** `sha256=<hex>` over `${timestampSeconds}.${rawBody}`. rawBody must be the exact bytes sent. */
export function sign(secret: string, timestampSeconds: number, rawBody: string | Uint8Array): string {
  return signWithKey(contractKey(secret), timestampSeconds, rawBody);
}

/** The contract header's HMAC key: the secret's UTF-8 bytes, whatever its form. */
function contractKey(secret: string): Buffer {
  if (typeof secret !== 'string' || secret.length === 0) throw new TypeError('signing secret must be a non-empty string');
  return Buffer.from(secret, 'utf8');
}

function signWithKey(key: Buffer | KeyObject, timestampSeconds: number, rawBody: string | Uint8Array): string {
  assertTimestamp(timestampSeconds);
  const hmac = createHmac('sha256', key);
  hmac.update(`${timestampSeconds}.`, 'utf8');
  hmac.update(rawBody);
  return SIGNATURE_PREFIX + hmac.digest('hex');
}

export type SignatureCheck =
  | { readonly valid: true }
  | { readonly valid: false; readonly reason: 'malformed_timestamp' | 'timestamp_out_of_tolerance' | 'malformed_signature' | 'mismatch' };

export interface VerifySignatureInput {
  /** One secret, or several during a rotation (any match is accepted). */
  readonly secret: string | readonly string[];
  /** The X-Chat-Gateway-Timestamp header value. */
  readonly timestamp: string;
  /** The X-Chat-Gateway-Signature header value ("sha256=<hex>"; a bare "<hex>" is accepted too). */
  readonly signature: string;
  readonly rawBody: string | Uint8Array;
  /** Unix seconds; defaults to the current time. */
  readonly nowSeconds?: number;
  /** Allowed |now - timestamp|; default 300 s. Infinity disables the replay check. */
  readonly toleranceSeconds?: number;
}

/** Receiver-side verification (used by tests and the gateway's own tools); constant-time compare. */
export function verifySignature(input: VerifySignatureInput): SignatureCheck {
  if (!/^\d{1,15}$/.test(input.timestamp)) return { valid: false, reason: 'malformed_timestamp' };
  const ts = Number(input.timestamp);
  const now = input.nowSeconds ?? Math.floor(Date.now() / 1000);
  const tolerance = input.toleranceSeconds ?? DEFAULT_SIGNATURE_TOLERANCE_SECONDS;
  if (Math.abs(now - ts) > tolerance) return { valid: false, reason: 'timestamp_out_of_tolerance' };
  const given = input.signature.trim().toLowerCase();
  const hex = given.startsWith(SIGNATURE_PREFIX) ? given.slice(SIGNATURE_PREFIX.length) : given;
  if (!/^[0-9a-f]{64}$/.test(hex)) return { valid: false, reason: 'malformed_signature' };
  const givenBytes = Buffer.from(hex, 'hex');
  const secrets = typeof input.secret === 'string' ? [input.secret] : input.secret;
  let ok = false;
  for (const s of secrets) {
    const expected = Buffer.from(sign(s, ts, input.rawBody).slice(SIGNATURE_PREFIX.length), 'hex');
    if (timingSafeEqual(expected, givenBytes)) ok = true;
  }
  return ok ? { valid: true } : { valid: false, reason: 'mismatch' };
}

/**
 * The HMAC key of the Standard Webhooks signature: the bytes our secret encodes after "whsec_"
 * (base64url as we generate them; standard base64 is read too). A secret that does not encode
 * 24 to 64 bytes is refused: every secret we issue is 32 random bytes (generateSigningSecret).
 */
export function standardWebhooksKey(secret: string): Buffer {
  const encoded = typeof secret === 'string' && secret.startsWith(SIGNING_SECRET_PREFIX) ? secret.slice(SIGNING_SECRET_PREFIX.length) : '';
  const key = /^[A-Za-z0-9+/_-]+={0,2}$/.test(encoded) ? Buffer.from(encoded.replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, ''), 'base64url') : Buffer.alloc(0);
  if (key.length < STANDARD_KEY_MIN_BYTES || key.length > STANDARD_KEY_MAX_BYTES) {
    throw new TypeError(`signing secret must be "${SIGNING_SECRET_PREFIX}" + base64 of ${STANDARD_KEY_MIN_BYTES}-${STANDARD_KEY_MAX_BYTES} bytes`);
  }
  return key;
}

/**
 * Our secret as a Standard Webhooks library takes it ("whsec_" + standard base64 of the same
 * bytes), e.g. `new Webhook(standardWebhooksSecret(secret))` of the npm package standardwebhooks.
 */
export function standardWebhooksSecret(secret: string): string {
  return SIGNING_SECRET_PREFIX + standardWebhooksKey(secret).toString('base64');
}

/** One "v1,<base64>" signature over `${id}.${timestampSeconds}.${rawBody}` (Standard Webhooks, symmetric). */
export function signStandard(secret: string, id: string, timestampSeconds: number, rawBody: string | Uint8Array): string {
  return signStandardWithKey(standardWebhooksKey(secret), id, timestampSeconds, rawBody);
}

function signStandardWithKey(key: Buffer | KeyObject, id: string, timestampSeconds: number, rawBody: string | Uint8Array): string {
  assertTimestamp(timestampSeconds);
  assertWebhookId(id);
  const hmac = createHmac('sha256', key);
  hmac.update(`${id}.${timestampSeconds}.`, 'utf8');
  hmac.update(rawBody);
  return `${STANDARD_SIGNATURE_VERSION},${hmac.digest('base64')}`;
}

/**
 * One signing secret made ready to sign many attempts: both HMAC keys derived from it once (the
 * standard one takes a format check and a base64 decode), for a caller that keeps it as long as
 * the secret itself signs (the worker's SigningKeyCache) and passes it as a SigningSecrets entry.
 * Refuses what sign and signStandard refuse.
 */
export interface SigningKey {
  readonly contract: KeyObject;
  readonly standard: KeyObject;
}

export function signingKey(secret: string): SigningKey {
  return { contract: createSecretKey(contractKey(secret)), standard: createSecretKey(standardWebhooksKey(secret)) };
}

/**
 * The id is signed with "." as the delimiter and sent as a header: the standard asks that it not be
 * user controlled nor contain ".", and a header must not carry CR/LF.
 */
function assertWebhookId(id: string): void {
  if (typeof id !== 'string' || !/^[A-Za-z0-9_-]{1,128}$/.test(id)) {
    throw new TypeError('deliveryId must be 1-128 characters of A-Z a-z 0-9 _ -');
  }
}

/** A new signing secret: "whsec_" + base64url of 32 random bytes (43 characters). */
export function generateSigningSecret(): string {
  return SIGNING_SECRET_PREFIX + randomBytes(32).toString('base64url');
}

/** A new delivery id ("whd_" + 32 hex chars). Create it once per (event, endpoint) and store it. */
export function generateDeliveryId(): string {
  return DELIVERY_ID_PREFIX + randomBytes(16).toString('hex');
}

/**
 * The delivery id of one gateway event to one instance's endpoint: derived, not random, so a
 * redelivered or replayed event maps to the same delivery (and the same id on the wire).
 */
export function deliveryIdFor(eventId: string, instanceId: string): string {
  return DELIVERY_ID_PREFIX + createHash('sha256').update(`${eventId}\n${instanceId}`, 'utf8').digest('hex').slice(0, 32);
}

/**
 * The secrets that sign one attempt: the current one, and the previous one while its overlap lasts;
 * each as its text, or as the keys derived from it (signingKey).
 */
export interface SigningSecrets<S extends string | SigningKey = string | SigningKey> {
  readonly current: S;
  readonly previous?: S | null;
}

export interface WebhookHeadersInput {
  readonly event: string;
  /** Stable across retries of the same event to the same endpoint. */
  readonly deliveryId: string;
  /** The exact body bytes (from buildWebhookEvent). */
  readonly body: string;
  /** Unix seconds of this attempt. */
  readonly timestampSeconds: number;
  /**
   * The endpoint's secret, or its secrets during a rotation's overlap (signingSecretsAt). When
   * absent, no signature header is sent (spec 6.1: only when a secret is configured).
   */
  readonly secret?: string | SigningSecrets | null;
  /** 1-based attempt number; sent as X-Chat-Gateway-Attempt when given. */
  readonly attempt?: number;
}

/** Request headers for one attempt. Names are in canonical case; HTTP treats them case-insensitively. */
export function buildWebhookHeaders(input: WebhookHeadersInput): Record<string, string> {
  assertTimestamp(input.timestampSeconds);
  assertWebhookId(input.deliveryId);
  const headers: Record<string, string> = {
    'Content-Type': 'application/json',
    'User-Agent': WEBHOOK_USER_AGENT,
    [WEBHOOK_HEADERS.event]: input.event,
    [WEBHOOK_HEADERS.delivery]: input.deliveryId,
    [WEBHOOK_HEADERS.timestamp]: String(input.timestampSeconds),
  };
  if (input.attempt !== undefined) headers[WEBHOOK_HEADERS.attempt] = String(input.attempt);
  // The delivery id is the Standard Webhooks message id: the same on every retry (an idempotency key).
  headers[STANDARD_WEBHOOK_HEADERS.id] = input.deliveryId;
  headers[STANDARD_WEBHOOK_HEADERS.timestamp] = String(input.timestampSeconds);
  const secrets = typeof input.secret === 'string' ? { current: input.secret } : input.secret;
  if (secrets?.current) {
    const signing = secrets.previous ? [secrets.current, secrets.previous] : [secrets.current];
    const keys = signing.map((s) => (typeof s === 'string' ? { contract: contractKey(s), standard: standardWebhooksKey(s) } : s));
    headers[WEBHOOK_HEADERS.signature] = signWithKey(keys.at(-1)!.contract, input.timestampSeconds, input.body);
    headers[STANDARD_WEBHOOK_HEADERS.signature] = keys.map((k) => signStandardWithKey(k.standard, input.deliveryId, input.timestampSeconds, input.body)).join(' ');
  }
  return headers;
}
