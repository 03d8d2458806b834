import { createHash } from 'node:crypto';
import { normaliseText } from './content/normalise-text.ts';

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
  return createHash('sha256').update(normaliseText(text), 'utf8').digest('hex');
}
