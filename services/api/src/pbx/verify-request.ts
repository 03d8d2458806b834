import { createHmac, timingSafeEqual } from 'node:crypto';
import { hashSecret } from '@gw/security';
import type { PbxIntegration } from './pbx-store.ts';

export interface PbxHeaders {
  secret: string | undefined;
  timestamp: string | undefined;
  signature: string | undefined;
}

const DUMMY_HASH = hashSecret('no-such-integration');

function equalHex(a: string, b: string): boolean {
  const left = Buffer.from(a, 'hex');
  const right = Buffer.from(b, 'hex');
  return left.length === right.length && left.length > 0 && timingSafeEqual(left, right);
}

/** HMAC-SHA256 over timestamp + "." + the raw body, hex. */
export function pbxSignature(secret: string, timestamp: string, rawBody: Buffer): string {
  return createHmac('sha256', secret).update(`${timestamp}.`).update(rawBody).digest('hex');
}

/**
 * The pre-authentication checks, all answered alike by the caller: the integration exists and is
 * enabled, the PBX secret matches (constant time, also when the integration is unknown), and with
 * HMAC signing a well-formed signature over a timestamp inside the window. Returns the normalised
 * signature (for the replay check) or null when any check fails.
 */
export function verifyPbxRequest(
  integration: PbxIntegration | null,
  headers: PbxHeaders,
  rawBody: Buffer,
  nowSeconds: number,
  windowSeconds: number,
): { ok: true; signature: string | null } | { ok: false } {
  const secretOk = timingSafeEqual(hashSecret(headers.secret ?? ''), integration?.secretHash ?? DUMMY_HASH);
  if (!integration || integration.disabled || !secretOk || headers.secret === undefined) return { ok: false };
  if (!integration.hmacSecret) return { ok: true, signature: null };

  const { timestamp, signature } = headers;
  if (!timestamp || !/^\d{1,12}$/.test(timestamp) || !signature) return { ok: false };
  const match = /^(?:sha256=)?([0-9a-fA-F]{64})$/.exec(signature.trim());
  if (!match) return { ok: false };
  if (Math.abs(nowSeconds - Number(timestamp)) > windowSeconds) return { ok: false };
  const expected = pbxSignature(integration.hmacSecret, timestamp, rawBody);
  const given = match[1]!.toLowerCase();
  return equalHex(given, expected) ? { ok: true, signature: given } : { ok: false };
}
