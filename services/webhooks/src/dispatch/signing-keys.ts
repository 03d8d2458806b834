import { signingKey, type SigningKey, type StoredSigningSecrets } from '@gw/webhooks';
import type { ClaimedDelivery } from './claims.ts';

/** Endpoints whose keys are kept at most: past it, the one used longest ago is dropped (and derived again if it comes back). */
export const SIGNING_KEY_CACHE_MAX_ENDPOINTS = 10_000;
/** An endpoint not attempted for this long loses its keys at the next prune (a deleted endpoint's secret does not linger). */
export const SIGNING_KEY_CACHE_IDLE_MS = 10 * 60_000;

export interface SigningKeyCacheOptions {
  /** Opens a sealed secret (current or previous column), bound to the endpoint's instance. */
  open(sealed: string, instanceId: string): string;
  maxEndpoints?: number;
  idleMs?: number;
}

interface Entry {
  /** The row's values the keys were derived from: the secrets' version (a rotation, or an overlap cut short, changes them). */
  readonly currentSealed: string;
  readonly previousSealed: string | null;
  readonly claimedExpiry: number | null;
  keys: { current: SigningKey; previous: SigningKey | null; previousExpiresAt: number | null };
  lastUsed: number;
}

/**
 * The worker's signing keys per endpoint: each secret opened and its HMAC keys derived once, not
 * on every attempt. An entry holds the secrets of the endpoint row as last claimed (its sealed
 * values and the overlap's end are compared on every look-up, so a rotation, or a value copied from another endpoint,
 * is opened afresh for that endpoint and never served from here), and only those: a rotated-out
 * secret is dropped when its overlap ends (at the next look-up or prune, whichever comes first),
 * an idle endpoint's at the next prune, and the endpoints held are bounded.
 */
export class SigningKeyCache {
  private readonly entries = new Map<string, Entry>();
  private readonly maxEndpoints: number;
  private readonly idleMs: number;

  constructor(private readonly options: SigningKeyCacheOptions) {
    this.maxEndpoints = options.maxEndpoints ?? SIGNING_KEY_CACHE_MAX_ENDPOINTS;
    this.idleMs = options.idleMs ?? SIGNING_KEY_CACHE_IDLE_MS;
  }

  /** The claim's endpoint's keys as of `nowMs`: the previous one only while its overlap lasts. */
  keysFor(claim: ClaimedDelivery, nowMs: number): StoredSigningSecrets<SigningKey> {
    let entry = this.entries.get(claim.instanceId);
    if (
      entry === undefined ||
      entry.currentSealed !== claim.signingSecretEnc ||
      entry.previousSealed !== claim.previousSigningSecretEnc ||
      entry.claimedExpiry !== claim.previousSecretExpiresAt
    ) {
      entry = this.derive(claim, nowMs);
    } else {
      this.dropEndedOverlap(entry, nowMs);
      this.entries.delete(claim.instanceId); // re-inserted last: the Map's order is the order of use
    }
    entry.lastUsed = nowMs;
    this.entries.set(claim.instanceId, entry);
    while (this.entries.size > this.maxEndpoints) this.entries.delete(this.entries.keys().next().value!);
    return entry.keys;
  }

  /** Drops idle endpoints and rotated-out secrets whose overlap has ended (the worker calls it with its lease sweep). */
  prune(nowMs: number): void {
    for (const [instanceId, entry] of this.entries) {
      if (nowMs - entry.lastUsed >= this.idleMs) this.entries.delete(instanceId);
      else this.dropEndedOverlap(entry, nowMs);
    }
  }

  /** Endpoints held now (for tests). */
  get size(): number {
    return this.entries.size;
  }

  /** Secrets whose keys are held now, current and previous ones (for tests). */
  get secretsHeld(): number {
    let n = 0;
    for (const entry of this.entries.values()) n += entry.keys.previous === null ? 1 : 2;
    return n;
  }

  private derive(claim: ClaimedDelivery, nowMs: number): Entry {
    this.entries.delete(claim.instanceId);
    const overlapping = claim.previousSigningSecretEnc !== null && claim.previousSecretExpiresAt !== null && nowMs < claim.previousSecretExpiresAt;
    const keyOf = (sealed: string) => signingKey(this.options.open(sealed, claim.instanceId));
    return {
      currentSealed: claim.signingSecretEnc,
      previousSealed: claim.previousSigningSecretEnc,
      claimedExpiry: claim.previousSecretExpiresAt,
      keys: {
        current: keyOf(claim.signingSecretEnc),
        // A previous secret whose overlap has ended is not even opened.
        previous: overlapping ? keyOf(claim.previousSigningSecretEnc!) : null,
        previousExpiresAt: overlapping ? claim.previousSecretExpiresAt : null,
      },
      lastUsed: nowMs,
    };
  }

  private dropEndedOverlap(entry: Entry, nowMs: number): void {
    if (entry.keys.previous !== null && (entry.keys.previousExpiresAt === null || nowMs >= entry.keys.previousExpiresAt)) {
      entry.keys = { current: entry.keys.current, previous: null, previousExpiresAt: null };
    }
  }
}
