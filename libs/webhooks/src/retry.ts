/**
 * Retry policy for customer webhooks: the schedule, Retry-After, classification of one attempt,
 * what to do next, and endpoint health (auto-disable). Everything is pure: time and randomness
 * are passed in.
 */

export const SECOND = 1_000;
export const MINUTE = 60 * SECOND;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;

/** Delay before attempt n (index n-1), measured from the previous attempt: immediately, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h. */
export const DEFAULT_RETRY_DELAYS_MS: readonly number[] = [
  0,
  5 * SECOND,
  5 * MINUTE,
  30 * MINUTE,
  2 * HOUR,
  5 * HOUR,
  10 * HOUR,
  10 * HOUR,
];

export interface RetryPolicy {
  /** delaysMs[i] = delay before attempt i+1 after attempt i (delaysMs[0] is the first attempt, normally 0). */
  readonly delaysMs: readonly number[];
  /** Each delay is multiplied by a factor in [1 - jitter, 1 + jitter]. Default 0.1. */
  readonly jitterRatio: number;
  /** A 2xx after this long does not count (and the transport should abort at this point). Default 15 s. */
  readonly attemptTimeoutMs: number;
  /** Retry-After values are clamped to [0, maxRetryAfterMs]. Default 10 h. */
  readonly maxRetryAfterMs: number;
  /** An endpoint whose every attempt failed for this long is disabled. Default 5 days. */
  readonly disableAfterMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = Object.freeze({
  delaysMs: DEFAULT_RETRY_DELAYS_MS,
  jitterRatio: 0.1,
  attemptTimeoutMs: 15 * SECOND,
  maxRetryAfterMs: 10 * HOUR,
  disableAfterMs: 5 * DAY,
});

/** A policy with overrides, validated (throws RangeError with a clear message). */
export function createRetryPolicy(overrides: Partial<RetryPolicy> = {}): RetryPolicy {
  const p: RetryPolicy = { ...DEFAULT_RETRY_POLICY, ...overrides };
  if (p.delaysMs.length === 0) throw new RangeError('retry policy needs at least one attempt');
  if (p.delaysMs.some((d) => !Number.isFinite(d) || d < 0)) throw new RangeError('retry delays must be finite and >= 0');
  if (!(p.jitterRatio >= 0 && p.jitterRatio < 1)) throw new RangeError('jitterRatio must be in [0, 1)');
  for (const k of ['attemptTimeoutMs', 'maxRetryAfterMs', 'disableAfterMs'] as const) {
    if (!Number.isFinite(p[k]) || p[k] <= 0) throw new RangeError(`${k} must be a positive number of milliseconds`);
  }
  return Object.freeze({ ...p, delaysMs: Object.freeze([...p.delaysMs]) });
}

export type Random = () => number;
type TimeInput = Date | number;
const ms = (t: TimeInput): number => (typeof t === 'number' ? t : t.getTime());

export function maxAttempts(policy: RetryPolicy = DEFAULT_RETRY_POLICY): number {
  return policy.delaysMs.length;
}

/** Jittered delay before attempt `attemptNumber` (1-based). `random` returns a value in [0, 1). */
export function attemptDelayMs(attemptNumber: number, random: Random = Math.random, policy: RetryPolicy = DEFAULT_RETRY_POLICY): number {
  const base = policy.delaysMs[attemptNumber - 1];
  if (base === undefined) throw new RangeError(`attempt ${attemptNumber} is outside the schedule (1..${policy.delaysMs.length})`);
  if (base === 0) return 0;
  const r = Math.min(Math.max(random(), 0), 1);
  return Math.round(base * (1 + policy.jitterRatio * (2 * r - 1)));
}

/**
 * When attempt `attemptNumber + 1` is due, given that attempt `attemptNumber` (1-based) failed
 * at `now`. Null when the schedule is exhausted (give up).
 */
export function nextAttemptAt(
  attemptNumber: number,
  now: TimeInput,
  random: Random = Math.random,
  policy: RetryPolicy = DEFAULT_RETRY_POLICY,
): Date | null {
  if (!Number.isInteger(attemptNumber) || attemptNumber < 1) throw new RangeError('attemptNumber must be an integer >= 1');
  if (attemptNumber >= policy.delaysMs.length) return null;
  return new Date(ms(now) + attemptDelayMs(attemptNumber + 1, random, policy));
}

/**
 * Parses a Retry-After header (delta seconds or an HTTP date) into a delay in ms from `now`,
 * clamped to [0, maxRetryAfterMs]. Null when absent or unparseable.
 */
export function parseRetryAfter(
  value: string | null | undefined,
  now: TimeInput,
  policy: RetryPolicy = DEFAULT_RETRY_POLICY,
): number | null {
  if (value === null || value === undefined) return null;
  const v = value.trim();
  if (v === '') return null;
  let delay: number;
  if (/^\d+$/.test(v)) delay = Number(v) * SECOND;
  else {
    // IMF-fixdate / RFC 850 / asctime; require a weekday-or-month word so "12.5" or "-3" is not a date.
    if (!/[A-Za-z]{3}/.test(v)) return null;
    const at = Date.parse(v);
    if (Number.isNaN(at)) return null;
    delay = at - ms(now);
  }
  return Math.min(Math.max(delay, 0), policy.maxRetryAfterMs);
}

// ---------------------------------------------------------------------------------------------
// Classification

/** What the transport observed for one attempt (DeliveryResult from deliver() fits). */
export interface AttemptObservation {
  /** HTTP status, or null when no response was received. */
  readonly status: number | null;
  readonly latencyMs: number;
  /** Raw Retry-After header, if any. */
  readonly retryAfter?: string | null;
  readonly error?: { readonly code: string; readonly message: string } | null;
}

export type FailureReason =
  | 'redirect'
  | 'client_error'
  | 'gone'
  | 'rate_limited'
  | 'server_error'
  | 'unavailable'
  | 'unexpected_status'
  | 'timeout'
  | 'network_error'
  | 'destination_blocked'
  | 'invalid_destination';

export type AttemptClassification =
  | { readonly outcome: 'success' }
  | {
      readonly outcome: 'failure';
      readonly reason: FailureReason;
      /** False when retrying cannot help (the destination URL itself is unacceptable). */
      readonly retryable: boolean;
      /** 410 Gone: the receiver asked us to stop; disable the endpoint now. */
      readonly disableEndpoint: boolean;
      /** For 429/503 with a usable Retry-After: the bounded delay in ms. */
      readonly retryAfterMs?: number;
      /** A short human-readable description for the attempt log / dashboard. */
      readonly detail: string;
    };

function failure(
  reason: FailureReason,
  detail: string,
  extra: { retryable?: boolean; disableEndpoint?: boolean; retryAfterMs?: number } = {},
): AttemptClassification {
  return {
    outcome: 'failure',
    reason,
    detail,
    retryable: extra.retryable ?? true,
    disableEndpoint: extra.disableEndpoint ?? false,
    ...(extra.retryAfterMs !== undefined ? { retryAfterMs: extra.retryAfterMs } : {}),
  };
}

/**
 * Success = a 2xx received within the attempt timeout. Everything else is a failure: 3xx
 * (redirects are never followed), 4xx, 5xx, timeouts, network errors and refused destinations.
 * 410 disables the endpoint; 429 and 503 carry a bounded Retry-After delay.
 */
export function classifyAttempt(
  obs: AttemptObservation,
  now: TimeInput,
  policy: RetryPolicy = DEFAULT_RETRY_POLICY,
): AttemptClassification {
  const status = obs.status;
  if (status === null || status === undefined) {
    const code = obs.error?.code ?? 'network_error';
    const message = obs.error?.message ?? 'no response';
    if (code === 'timeout') return failure('timeout', `no response within ${policy.attemptTimeoutMs} ms`);
    if (code === 'destination_blocked') return failure('destination_blocked', message);
    if (code === 'invalid_url') return failure('invalid_destination', message, { retryable: false });
    return failure('network_error', message);
  }
  if (status >= 200 && status < 300) {
    if (obs.latencyMs > policy.attemptTimeoutMs) {
      return failure('timeout', `answered ${status} after ${obs.latencyMs} ms (limit ${policy.attemptTimeoutMs} ms)`);
    }
    return { outcome: 'success' };
  }
  if (status >= 300 && status < 400) return failure('redirect', `answered ${status}; redirects are not followed`);
  if (status === 410) return failure('gone', 'answered 410 Gone; the endpoint is disabled', { disableEndpoint: true });
  if (status === 429 || status === 503) {
    const retryAfterMs = parseRetryAfter(obs.retryAfter, now, policy);
    const reason = status === 429 ? 'rate_limited' : 'unavailable';
    const detail = `answered ${status}${retryAfterMs !== null ? `; Retry-After ${Math.round(retryAfterMs / SECOND)} s honoured` : ''}`;
    return failure(reason, detail, retryAfterMs !== null ? { retryAfterMs } : {});
  }
  if (status >= 400 && status < 500) return failure('client_error', `answered ${status}`);
  if (status >= 500 && status < 600) return failure('server_error', `answered ${status}`);
  return failure('unexpected_status', `answered unexpected status ${status}`);
}

// ---------------------------------------------------------------------------------------------
// Next step for one delivery

export type DeliveryPlan =
  | { readonly action: 'delivered' }
  | { readonly action: 'retry'; readonly attemptNumber: number; readonly at: Date }
  /** No attempts left (or retrying cannot help): the delivery is failed for good. */
  | { readonly action: 'give_up'; readonly reason: string }
  /** The endpoint must be disabled; this and every pending delivery to it stop. */
  | { readonly action: 'disable_endpoint'; readonly reason: string };

export interface PlanInput {
  /** The 1-based number of the attempt just made. */
  readonly attemptNumber: number;
  readonly classification: AttemptClassification;
  readonly now: TimeInput;
  readonly random?: Random;
  readonly policy?: RetryPolicy;
}

/**
 * What to do after an attempt. A retry is scheduled by the schedule; for 429/503 with a
 * Retry-After it is never earlier than the (bounded) time the receiver asked for. An attempt
 * that honours Retry-After still counts as one attempt.
 */
export function planAfterAttempt(input: PlanInput): DeliveryPlan {
  const { classification: c, attemptNumber } = input;
  const policy = input.policy ?? DEFAULT_RETRY_POLICY;
  if (c.outcome === 'success') return { action: 'delivered' };
  if (c.disableEndpoint) return { action: 'disable_endpoint', reason: c.detail };
  if (!c.retryable) return { action: 'give_up', reason: c.detail };
  const scheduled = nextAttemptAt(attemptNumber, input.now, input.random ?? Math.random, policy);
  if (!scheduled) return { action: 'give_up', reason: `${attemptNumber} attempts failed; last: ${c.detail}` };
  const at = c.retryAfterMs !== undefined ? Math.max(scheduled.getTime(), ms(input.now) + c.retryAfterMs) : scheduled.getTime();
  return { action: 'retry', attemptNumber: attemptNumber + 1, at: new Date(at) };
}

// ---------------------------------------------------------------------------------------------
// Endpoint health

export interface EndpointHealth {
  readonly state: 'active' | 'disabled';
  /** Epoch ms of the first failure since the last success; null while healthy. */
  readonly failingSince: number | null;
  readonly lastSuccessAt: number | null;
  readonly consecutiveFailures: number;
  readonly disabledAt: number | null;
  readonly disabledReason: 'gone' | 'failing_too_long' | null;
}

export const HEALTHY_ENDPOINT: EndpointHealth = Object.freeze({
  state: 'active',
  failingSince: null,
  lastSuccessAt: null,
  consecutiveFailures: 0,
  disabledAt: null,
  disabledReason: null,
});

/**
 * Folds one attempt into an endpoint's health. Any success resets the failure streak; a 410
 * disables at once; an endpoint with no success since its first failure `disableAfterMs` ago is
 * disabled. A disabled endpoint stays disabled (re-enabling is an explicit customer action:
 * start again from HEALTHY_ENDPOINT).
 */
export function updateEndpointHealth(
  health: EndpointHealth,
  classification: AttemptClassification,
  now: TimeInput,
  policy: RetryPolicy = DEFAULT_RETRY_POLICY,
): EndpointHealth {
  if (health.state === 'disabled') return health;
  const t = ms(now);
  if (classification.outcome === 'success') {
    return { ...health, failingSince: null, lastSuccessAt: t, consecutiveFailures: 0 };
  }
  const failingSince = health.failingSince ?? t;
  const next = { ...health, failingSince, consecutiveFailures: health.consecutiveFailures + 1 };
  if (classification.disableEndpoint) return { ...next, state: 'disabled', disabledAt: t, disabledReason: 'gone' };
  if (t - failingSince >= policy.disableAfterMs) {
    return { ...next, state: 'disabled', disabledAt: t, disabledReason: 'failing_too_long' };
  }
  return next;
}
