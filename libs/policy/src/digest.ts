import * as crypto from 'node:crypto';
import { normaliseText } from './content/normalise-text.ts';

// One-shot hashing (Node >= 20.12) skips a Hash object per call, most of the cost of hashing a
// short string; older Node falls back to createHash (the same digest).
const oneShot = (crypto as { hash?: (algorithm: string, data: string, encoding: 'hex') => string }).hash;

/** SHA-256 hex of a UTF-8 string. */
export const sha256Hex = (text: string): string => (oneShot ? oneShot('sha256', text, 'hex') : crypto.createHash('sha256').update(text, 'utf8').digest('hex'));

/**
 * SHA-256 hex of the normalised body (normaliseText: case, whitespace, NFKC, zero-width). Bulk
 * detection counts distinct recipients per digest, and the policy log stores it instead of the body.
 *
 * Digits are deliberately NOT collapsed: "Your code is 123456" and "Your code is 987654" differ.
 * Collapsing them would turn bulk detection into a template-volume limit and refuse exactly the
 * legitimate traffic this product carries (one-time codes, order numbers, appointment times sent
 * by the thousand); an identical body to many people is what a broadcast looks like.
 */
export function messageDigest(text: string): string {
  return sha256Hex(normaliseText(text));
}
