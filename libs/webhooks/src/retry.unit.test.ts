import { describe, expect, it } from 'vitest';
import {
  DAY,
  DEFAULT_RETRY_DELAYS_MS,
  HEALTHY_ENDPOINT,
  HOUR,
  MINUTE,
  SECOND,
  attemptDelayMs,
  classifyAttempt,
  createRetryPolicy,
  nextAttemptAt,
  parseRetryAfter,
  planAfterAttempt,
  updateEndpointHealth,
  type AttemptClassification,
  type EndpointHealth,
} from './retry.ts';

const t0 = new Date('2025-01-31T12:00:00.000Z');
const mid = () => 0.5; // no jitter
const low = () => 0; // -10 %
const high = () => 0.999999; // almost +10 %

describe('retry schedule', () => {
  it('given the default policy, then immediately, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h', () => {
    expect(DEFAULT_RETRY_DELAYS_MS).toEqual([0, 5 * SECOND, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 5 * HOUR, 10 * HOUR, 10 * HOUR]);
    const delays = [1, 2, 3, 4, 5, 6, 7].map((n) => nextAttemptAt(n, t0, mid)!.getTime() - t0.getTime());
    expect(delays).toEqual(DEFAULT_RETRY_DELAYS_MS.slice(1));
  });

  it('given attempt 8 failed, when asking for the next, then null (give up)', () => {
    expect(nextAttemptAt(8, t0, mid)).toBeNull();
  });

  it('given a random source, then jitter stays within ±10 % and is deterministic', () => {
    expect(attemptDelayMs(3, low)).toBe(270_000);
    expect(attemptDelayMs(3, high)).toBeCloseTo(330_000, -1);
    expect(attemptDelayMs(1, high)).toBe(0);
    const seq = [0.1, 0.7, 0.3];
    const r1 = ((i) => () => seq[i++ % 3]!)(0);
    const r2 = ((i) => () => seq[i++ % 3]!)(0);
    expect([2, 3, 4].map((n) => nextAttemptAt(n, t0, r1)!.getTime())).toEqual([2, 3, 4].map((n) => nextAttemptAt(n, t0, r2)!.getTime()));
    for (let i = 0; i < 1000; i++) {
      const d = attemptDelayMs(5, Math.random);
      expect(d).toBeGreaterThanOrEqual(2 * HOUR * 0.9);
      expect(d).toBeLessThanOrEqual(2 * HOUR * 1.1);
    }
  });

  it('given a custom policy, then its delays and jitter are used', () => {
    const policy = createRetryPolicy({ delaysMs: [0, 1000, 2000], jitterRatio: 0 });
    expect(nextAttemptAt(1, t0, high, policy)!.getTime() - t0.getTime()).toBe(1000);
    expect(nextAttemptAt(2, 0, high, policy)!.getTime()).toBe(2000);
    expect(nextAttemptAt(3, t0, high, policy)).toBeNull();
    expect(() => createRetryPolicy({ delaysMs: [] })).toThrow(/at least one/);
    expect(() => createRetryPolicy({ jitterRatio: 1.5 })).toThrow(/jitter/);
  });
});

describe('Retry-After', () => {
  it('given delta seconds, then that delay', () => {
    expect(parseRetryAfter('120', t0)).toBe(120 * SECOND);
    expect(parseRetryAfter(' 0 ', t0)).toBe(0);
  });

  it('given an HTTP date, then the time until it (never negative)', () => {
    expect(parseRetryAfter('Fri, 31 Jan 2025 12:10:00 GMT', t0)).toBe(10 * MINUTE);
    expect(parseRetryAfter('Fri, 31 Jan 2025 11:00:00 GMT', t0)).toBe(0);
  });

  it('given a huge value, then it is bounded', () => {
    expect(parseRetryAfter('99999999', t0)).toBe(10 * HOUR);
    expect(parseRetryAfter('99999999', t0, createRetryPolicy({ maxRetryAfterMs: HOUR }))).toBe(HOUR);
  });

  it('given garbage, then null', () => {
    for (const v of [undefined, null, '', '-5', '1.5', 'soon', 'Foo, 99 Bar 2025']) expect(parseRetryAfter(v, t0)).toBeNull();
  });
});

describe('classifyAttempt', () => {
  const obs = (status: number | null, extra: Record<string, unknown> = {}) => ({ status, latencyMs: 120, ...extra });

  it('given a 2xx within 15 s, then success', () => {
    for (const s of [200, 201, 202, 204, 299]) expect(classifyAttempt(obs(s), t0)).toEqual({ outcome: 'success' });
  });

  it('given a 2xx after more than 15 s, then a timeout failure', () => {
    expect(classifyAttempt(obs(200, { latencyMs: 15_001 }), t0)).toMatchObject({ outcome: 'failure', reason: 'timeout' });
  });

  it('given 3xx, 4xx, 5xx, then retryable failures that keep the endpoint', () => {
    const cases: Array<[number, string]> = [
      [301, 'redirect'],
      [302, 'redirect'],
      [307, 'redirect'],
      [400, 'client_error'],
      [401, 'client_error'],
      [404, 'client_error'],
      [500, 'server_error'],
      [502, 'server_error'],
      [504, 'server_error'],
      [101, 'unexpected_status'],
    ];
    for (const [status, reason] of cases) {
      expect(classifyAttempt(obs(status), t0), String(status)).toMatchObject({
        outcome: 'failure',
        reason,
        retryable: true,
        disableEndpoint: false,
      });
    }
  });

  it('given 410, then the endpoint is to be disabled', () => {
    expect(classifyAttempt(obs(410), t0)).toMatchObject({ outcome: 'failure', reason: 'gone', disableEndpoint: true });
  });

  it('given 429 or 503 with Retry-After, then the bounded delay is carried', () => {
    expect(classifyAttempt(obs(429, { retryAfter: '30' }), t0)).toMatchObject({ reason: 'rate_limited', retryAfterMs: 30 * SECOND });
    expect(classifyAttempt(obs(503, { retryAfter: 'Fri, 31 Jan 2025 13:00:00 GMT' }), t0)).toMatchObject({
      reason: 'unavailable',
      retryAfterMs: HOUR,
    });
    expect(classifyAttempt(obs(429), t0)).not.toHaveProperty('retryAfterMs');
    // Retry-After on other statuses is ignored.
    expect(classifyAttempt(obs(500, { retryAfter: '30' }), t0)).not.toHaveProperty('retryAfterMs');
  });

  it('given no response, then timeout / network / blocked failures; an invalid URL is not retryable', () => {
    expect(classifyAttempt(obs(null, { error: { code: 'timeout', message: '' } }), t0)).toMatchObject({ reason: 'timeout', retryable: true });
    expect(classifyAttempt(obs(null, { error: { code: 'connection_refused', message: 'x' } }), t0)).toMatchObject({ reason: 'network_error' });
    expect(classifyAttempt(obs(null, { error: { code: 'destination_blocked', message: 'x' } }), t0)).toMatchObject({
      reason: 'destination_blocked',
      retryable: true,
    });
    expect(classifyAttempt(obs(null, { error: { code: 'invalid_url', message: 'x' } }), t0)).toMatchObject({
      reason: 'invalid_destination',
      retryable: false,
    });
  });
});

describe('planAfterAttempt', () => {
  const fail = (status: number, retryAfter?: string) => classifyAttempt({ status, latencyMs: 10, retryAfter }, t0);

  it('given success, then delivered', () => {
    expect(planAfterAttempt({ attemptNumber: 1, classification: { outcome: 'success' }, now: t0 })).toEqual({ action: 'delivered' });
  });

  it('given a 500 on attempt 2, then retry attempt 3 in 5 min (±10 %)', () => {
    const plan = planAfterAttempt({ attemptNumber: 2, classification: fail(500), now: t0, random: mid });
    expect(plan).toEqual({ action: 'retry', attemptNumber: 3, at: new Date(t0.getTime() + 5 * MINUTE) });
  });

  it('given a 500 on the last attempt, then give up', () => {
    expect(planAfterAttempt({ attemptNumber: 8, classification: fail(500), now: t0, random: mid })).toMatchObject({ action: 'give_up' });
  });

  it('given 429 with Retry-After longer than the schedule, then not before Retry-After', () => {
    const plan = planAfterAttempt({ attemptNumber: 1, classification: fail(429, '120'), now: t0, random: mid });
    expect(plan).toEqual({ action: 'retry', attemptNumber: 2, at: new Date(t0.getTime() + 120 * SECOND) });
  });

  it('given 503 with Retry-After shorter than the schedule, then the schedule', () => {
    const plan = planAfterAttempt({ attemptNumber: 3, classification: fail(503, '1'), now: t0, random: mid });
    expect(plan).toEqual({ action: 'retry', attemptNumber: 4, at: new Date(t0.getTime() + 30 * MINUTE) });
  });

  it('given 429 with an absurd Retry-After, then bounded to 10 h', () => {
    const plan = planAfterAttempt({ attemptNumber: 1, classification: fail(429, '31536000'), now: t0, random: mid });
    expect(plan).toMatchObject({ action: 'retry', at: new Date(t0.getTime() + 10 * HOUR) });
  });

  it('given 410, then disable the endpoint', () => {
    expect(planAfterAttempt({ attemptNumber: 1, classification: fail(410), now: t0 })).toMatchObject({ action: 'disable_endpoint' });
  });

  it('given an invalid destination, then give up at once', () => {
    const c = classifyAttempt({ status: null, latencyMs: 0, error: { code: 'invalid_url', message: 'https required' } }, t0);
    expect(planAfterAttempt({ attemptNumber: 1, classification: c, now: t0 })).toEqual({ action: 'give_up', reason: 'https required' });
  });
});

describe('endpoint health', () => {
  const failure: AttemptClassification = classifyAttempt({ status: 500, latencyMs: 5 }, t0);
  const success: AttemptClassification = { outcome: 'success' };
  const at = (ms: number) => t0.getTime() + ms;

  it('given failures for just under 5 days, then still active; at 5 days, then disabled', () => {
    let h: EndpointHealth = HEALTHY_ENDPOINT;
    h = updateEndpointHealth(h, failure, at(0));
    h = updateEndpointHealth(h, failure, at(4 * DAY));
    h = updateEndpointHealth(h, failure, at(5 * DAY - 1));
    expect(h).toMatchObject({ state: 'active', failingSince: at(0), consecutiveFailures: 3 });
    h = updateEndpointHealth(h, failure, at(5 * DAY));
    expect(h).toMatchObject({ state: 'disabled', disabledReason: 'failing_too_long', disabledAt: at(5 * DAY) });
  });

  it('given a success in between, then the failing period restarts', () => {
    let h: EndpointHealth = HEALTHY_ENDPOINT;
    h = updateEndpointHealth(h, failure, at(0));
    h = updateEndpointHealth(h, success, at(3 * DAY));
    h = updateEndpointHealth(h, failure, at(4 * DAY));
    h = updateEndpointHealth(h, failure, at(6 * DAY));
    expect(h).toMatchObject({ state: 'active', failingSince: at(4 * DAY), lastSuccessAt: at(3 * DAY) });
  });

  it('given a 410, then disabled at once and stays disabled', () => {
    let h = updateEndpointHealth(HEALTHY_ENDPOINT, classifyAttempt({ status: 410, latencyMs: 1 }, t0), at(0));
    expect(h).toMatchObject({ state: 'disabled', disabledReason: 'gone' });
    h = updateEndpointHealth(h, success, at(1));
    expect(h.state).toBe('disabled');
  });

  it('given a configured period, then it is used', () => {
    const policy = createRetryPolicy({ disableAfterMs: HOUR });
    let h = updateEndpointHealth(HEALTHY_ENDPOINT, failure, at(0), policy);
    h = updateEndpointHealth(h, failure, at(HOUR), policy);
    expect(h.state).toBe('disabled');
  });
});
