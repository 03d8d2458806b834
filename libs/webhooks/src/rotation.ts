import type { SigningKey, SigningSecrets } from './signing.ts';

/**
 * Secret rotation with overlap (docs/webhooks.md, "Rotating the signing secret"). Rotating keeps
 * the secret it replaces, sealed beside the new one, until `previousExpiresAt`; until then an
 * attempt is signed with both, afterwards with the new one only. Pure: the attempt's own time is
 * passed in, so a test (or a worker with a fake clock) decides what "now" is. The secrets may be
 * their text or the keys derived from them (signingKey).
 */
export interface StoredSigningSecrets<S extends string | SigningKey = string> {
  readonly current: S;
  /** The secret the last rotation replaced, or null (never rotated, or rotated without overlap). */
  readonly previous: S | null;
  /** Unix ms; the previous secret signs attempts made strictly before it. */
  readonly previousExpiresAt: number | null;
}

export function signingSecretsAt<S extends string | SigningKey>(stored: StoredSigningSecrets<S>, nowMs: number): SigningSecrets<S> {
  const overlapping = stored.previous !== null && stored.previousExpiresAt !== null && nowMs < stored.previousExpiresAt;
  return overlapping ? { current: stored.current, previous: stored.previous } : { current: stored.current };
}
