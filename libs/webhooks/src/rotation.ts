import type { SigningSecrets } from './signing.ts';

/**
 * Secret rotation with overlap (docs/webhooks.md, "Rotating the signing secret"). Rotating keeps
 * the secret it replaces, sealed beside the new one, until `previousExpiresAt`; until then an
 * attempt is signed with both, afterwards with the new one only. Pure: the attempt's own time is
 * passed in, so a test (or a worker with a fake clock) decides what "now" is.
 */
export interface StoredSigningSecrets {
  readonly current: string;
  /** The secret the last rotation replaced, or null (never rotated, or rotated without overlap). */
  readonly previous: string | null;
  /** Unix ms; the previous secret signs attempts made strictly before it. */
  readonly previousExpiresAt: number | null;
}

export function signingSecretsAt(stored: StoredSigningSecrets, nowMs: number): SigningSecrets {
  const overlapping = stored.previous !== null && stored.previousExpiresAt !== null && nowMs < stored.previousExpiresAt;
  return overlapping ? { current: stored.current, previous: stored.previous } : { current: stored.current };
}
