import { describe, expect, it } from 'vitest';
import { buildWebhookHeaders, generateSigningSecret, signingKey, signingSecretsAt } from '@gw/webhooks';
import type { ClaimedDelivery } from './claims.ts';
import { SigningKeyCache } from './signing-keys.ts';

// "Sealed" values here are the secrets behind a marker, opened by a counting opener: what matters
// is how often a secret is opened and which keys come back, not the sealing (signing-secrets.ts).
const seal = (instanceId: string, secret: string) => `sealed:${instanceId}:${secret}`;
function countingOpener() {
  const opened: string[] = [];
  const open = (sealed: string, instanceId: string) => {
    const [, boundTo, secret] = sealed.split(':');
    if (boundTo !== instanceId) throw new Error('sealed for another endpoint');
    opened.push(secret!);
    return secret!;
  };
  return { opened, open };
}

const T0 = 1_700_000_000_000;
const oldSecret = generateSigningSecret();
const newSecret = generateSigningSecret();

function claim(instanceId: string, current: string, previous: { secret: string; expiresAt: number } | null = null): ClaimedDelivery {
  return {
    deliveryId: 'whd_1', instanceId, event: 'message.sent', body: '{}', attempt: 1, roundAttempt: 1, destinationUrl: 'https://example.com/hook',
    signingSecretEnc: seal(instanceId, current),
    previousSigningSecretEnc: previous === null ? null : seal(instanceId, previous.secret),
    previousSecretExpiresAt: previous?.expiresAt ?? null,
    endpointFailing: false, traceParent: null,
  };
}

/** The headers an attempt at nowMs would carry with these keys (what the keys are for). */
function headersAt(keys: Parameters<typeof signingSecretsAt>[0], nowMs: number) {
  return buildWebhookHeaders({ event: 'message.sent', deliveryId: 'whd_1', body: '{}', timestampSeconds: Math.floor(nowMs / 1000), secret: signingSecretsAt(keys, nowMs) });
}

describe('SigningKeyCache', () => {
  it('opens and derives a secret once for many attempts, and signs as the secret itself does', () => {
    const { opened, open } = countingOpener();
    const cache = new SigningKeyCache({ open });
    for (let i = 0; i < 5; i++) cache.keysFor(claim('ins_a', newSecret), T0 + i);
    expect(opened).toEqual([newSecret]);
    expect(headersAt(cache.keysFor(claim('ins_a', newSecret), T0), T0)).toEqual(headersAt({ current: newSecret, previous: null, previousExpiresAt: null }, T0));
  });

  it('given a rotation, then the new secret at once, the old one beside it during the overlap only, and never opened after it', () => {
    const { opened, open } = countingOpener();
    const cache = new SigningKeyCache({ open });
    cache.keysFor(claim('ins_a', oldSecret), T0);
    const rotated = claim('ins_a', newSecret, { secret: oldSecret, expiresAt: T0 + 60_000 });
    const during = cache.keysFor(rotated, T0 + 1_000);
    expect(headersAt(during, T0 + 1_000)).toEqual(headersAt({ current: newSecret, previous: oldSecret, previousExpiresAt: T0 + 60_000 }, T0 + 1_000));
    expect(cache.keysFor(rotated, T0 + 60_000).previous).toBeNull();
    // Overlap already over when first seen: the previous secret is not even opened.
    const fresh = countingOpener();
    expect(new SigningKeyCache({ open: fresh.open }).keysFor(rotated, T0 + 60_000).previous).toBeNull();
    expect(fresh.opened).toEqual([newSecret]);
    expect(opened).toEqual([oldSecret, newSecret, oldSecret]);
  });

  it('given an overlap cut short (same sealed values, an earlier end), then the earlier end counts', () => {
    const { open } = countingOpener();
    const cache = new SigningKeyCache({ open });
    cache.keysFor(claim('ins_a', newSecret, { secret: oldSecret, expiresAt: T0 + 60_000 }), T0);
    expect(cache.keysFor(claim('ins_a', newSecret, { secret: oldSecret, expiresAt: T0 + 5_000 }), T0 + 10_000).previous).toBeNull();
  });

  it('prune drops a previous secret whose overlap ended and endpoints idle too long', () => {
    const { open } = countingOpener();
    const cache = new SigningKeyCache({ open, idleMs: 60_000 });
    const rotating = cache.keysFor(claim('ins_a', newSecret, { secret: oldSecret, expiresAt: T0 + 5_000 }), T0);
    cache.keysFor(claim('ins_b', newSecret), T0 + 30_000);
    expect(cache.secretsHeld).toBe(3);
    cache.prune(T0 + 4_999);
    expect(cache.secretsHeld).toBe(3);
    cache.prune(T0 + 5_000);
    expect(cache.secretsHeld).toBe(2);
    expect(cache.keysFor(claim('ins_a', newSecret, { secret: oldSecret, expiresAt: T0 + 5_000 }), T0 + 10_000).previous).toBeNull();
    expect(rotating.previous).not.toBeNull(); // what an attempt already holds is its own
    cache.prune(T0 + 10_000 + 60_000);
    expect(cache.size).toBe(1); // ins_b, last used at T0 + 30 s, not idle for 60 s yet
    cache.prune(T0 + 30_000 + 60_000);
    expect(cache.size).toBe(0);
  });

  it('holds at most maxEndpoints endpoints, dropping the one used longest ago', () => {
    const { opened, open } = countingOpener();
    const cache = new SigningKeyCache({ open, maxEndpoints: 2 });
    cache.keysFor(claim('ins_a', newSecret), T0);
    cache.keysFor(claim('ins_b', newSecret), T0);
    cache.keysFor(claim('ins_a', newSecret), T0); // a used again: b is now the oldest
    cache.keysFor(claim('ins_c', newSecret), T0);
    expect(cache.size).toBe(2);
    opened.length = 0;
    cache.keysFor(claim('ins_a', newSecret), T0);
    expect(opened).toEqual([]);
    cache.keysFor(claim('ins_b', newSecret), T0);
    expect(opened).toEqual([newSecret]);
  });

  it('never serves one endpoint the keys of another, nor opens a value sealed for another endpoint', () => {
    const { open } = countingOpener();
    const cache = new SigningKeyCache({ open });
    cache.keysFor(claim('ins_a', newSecret), T0);
    const copied = { ...claim('ins_b', newSecret), signingSecretEnc: seal('ins_a', newSecret) };
    expect(() => cache.keysFor(copied, T0)).toThrow(/another endpoint/);
    expect(headersAt(cache.keysFor(claim('ins_b', oldSecret), T0), T0)).toEqual(headersAt({ current: signingKey(oldSecret), previous: null, previousExpiresAt: null }, T0));
  });
});
