import { describe, expect, it } from 'vitest';
import { classifyAttempt, createRetryPolicy, planAfterAttempt, type DeliveryResult } from '@gw/webhooks';
import type { AttemptRecord } from './attempt.ts';
import type { ClaimedDelivery } from './claims.ts';
import { foldHealth, type EndpointHealthRow } from './endpoint-health.ts';
import { errorOf, outcomeOf } from './recorder.ts';

const policy = createRetryPolicy({ delaysMs: [0, 1000, 2000], jitterRatio: 0, disableAfterMs: 10_000 });
const T0 = Date.parse('2026-11-22T10:00:00.000Z');

const claim = (roundAttempt: number): ClaimedDelivery => ({
  deliveryId: 'whd_00000000000000000000000000000001',
  instanceId: 'ins_1',
  event: 'message.sent',
  body: '{}',
  attempt: roundAttempt,
  roundAttempt,
  destinationUrl: 'https://hooks.example.com/x',
  signingSecretEnc: 'sealed',
  previousSigningSecretEnc: null,
  previousSecretExpiresAt: null,
  endpointFailing: false,
  traceParent: null,
});

/** given an attempt observation at a time, when planned, then the record the worker hands the recorder. */
function attempt(roundAttempt: number, at: number, result: Partial<DeliveryResult>): AttemptRecord {
  const full: DeliveryResult = { status: null, latencyMs: 5, responseSnippet: '', ...result };
  const classification = classifyAttempt(full, at, policy);
  return { claim: claim(roundAttempt), attemptedAt: at, result: full, classification, plan: planAfterAttempt({ attemptNumber: roundAttempt, classification, now: at, policy, random: () => 0.5 }) };
}

const healthy: EndpointHealthRow = { instance_id: 'ins_1', status: 'active', failing_since: null, last_success_at: null, consecutive_failures: 0, disabled_at: null, disabled_reason: null };

describe('outcomeOf', () => {
  it('a 2xx is delivered', () => {
    expect(outcomeOf(attempt(1, T0, { status: 204 }))).toEqual({ state: 'delivered', outcome: 'delivered', nextAttemptAt: null });
  });
  it('a failure with attempts left is pending again, due by the schedule', () => {
    const r = attempt(1, T0, { status: 500 });
    expect(outcomeOf(r)).toEqual({ state: 'pending', outcome: 'retry', nextAttemptAt: new Date(T0 + 1000) });
    expect(errorOf(r)).toBe('server_error: answered 500');
  });
  it('the last attempt failing fails the delivery, kept for resend', () => {
    expect(outcomeOf(attempt(3, T0, { status: 500 }))).toEqual({ state: 'failed', outcome: 'failed', nextAttemptAt: null });
  });
  it('410 fails the delivery and disables the endpoint', () => {
    expect(outcomeOf(attempt(1, T0, { status: 410 }))).toEqual({ state: 'failed', outcome: 'endpoint_disabled', nextAttemptAt: null });
  });
  it('a refused connection is retried and named', () => {
    const r = attempt(1, T0, { error: { code: 'connection_refused', message: 'connect ECONNREFUSED 127.0.0.1:9' } });
    expect(outcomeOf(r).outcome).toBe('retry');
    expect(errorOf(r)).toMatch(/^network_error: connect ECONNREFUSED/);
  });
});

describe('foldHealth', () => {
  it('given a healthy endpoint, when attempts fail, then the streak starts at the first failure', () => {
    const { health, status } = foldHealth(healthy, [attempt(1, T0 + 50, { status: 500 }), attempt(1, T0, { status: 502 })], policy);
    expect(status).toBe('active');
    expect(health).toMatchObject({ failingSince: T0, consecutiveFailures: 2, state: 'active' });
  });
  it('given a failing endpoint, when one attempt succeeds, then the streak resets', () => {
    const failing = { ...healthy, failing_since: new Date(T0), consecutive_failures: 7 };
    const { health } = foldHealth(failing, [attempt(2, T0 + 5000, { status: 200 })], policy);
    expect(health).toMatchObject({ failingSince: null, consecutiveFailures: 0, lastSuccessAt: T0 + 5000 });
  });
  it('given an endpoint failing for longer than the disable period, when another attempt fails, then it is disabled', () => {
    const failing = { ...healthy, failing_since: new Date(T0), consecutive_failures: 3 };
    const { health, status } = foldHealth(failing, [attempt(2, T0 + 10_000, { status: 503 })], policy);
    expect(status).toBe('disabled');
    expect(health).toMatchObject({ disabledReason: 'failing_too_long', disabledAt: T0 + 10_000 });
  });
  it('given a paused endpoint, when a 410 arrives, then it is disabled; other failures keep it paused', () => {
    const paused = { ...healthy, status: 'paused' as const };
    expect(foldHealth(paused, [attempt(1, T0, { status: 500 })], policy).status).toBe('paused');
    expect(foldHealth(paused, [attempt(1, T0, { status: 410 })], policy)).toMatchObject({ status: 'disabled', health: { disabledReason: 'gone' } });
  });
});
