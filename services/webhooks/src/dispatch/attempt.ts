import {
  buildWebhookHeaders,
  classifyAttempt,
  deliver,
  planAfterAttempt,
  type AttemptClassification,
  type DeliveryPlan,
  type DeliveryResult,
  type RetryPolicy,
  type SsrfGuard,
} from '@gw/webhooks';
import type { ClaimedDelivery } from './claims.ts';

export interface AttemptDeps {
  guard: SsrfGuard;
  policy: RetryPolicy;
  now: () => number;
  random?: () => number;
  /** The endpoint's signing secret in plain text (opened from its sealed form). */
  secretFor(claim: ClaimedDelivery): string;
}

/** What one attempt did and what follows from it: the unit the recorder writes. */
export interface AttemptRecord {
  claim: ClaimedDelivery;
  attemptedAt: number;
  result: DeliveryResult;
  classification: AttemptClassification;
  plan: DeliveryPlan;
}

/**
 * One signed POST of a claimed delivery. The timestamp and signature are made for this attempt
 * (a retry carries a newer timestamp); the delivery id is the same on every attempt.
 */
export async function attemptDelivery(claim: ClaimedDelivery, deps: AttemptDeps): Promise<AttemptRecord> {
  const attemptedAt = deps.now();
  const headers = buildWebhookHeaders({
    event: claim.event,
    deliveryId: claim.deliveryId,
    body: claim.body,
    timestampSeconds: Math.floor(attemptedAt / 1000),
    secret: deps.secretFor(claim),
    attempt: claim.attempt,
  });
  const result = await deliver({ url: claim.destinationUrl, body: claim.body, headers, guard: deps.guard, timeoutMs: deps.policy.attemptTimeoutMs });
  const now = deps.now();
  const classification = classifyAttempt(result, now, deps.policy);
  const plan = planAfterAttempt({ attemptNumber: claim.roundAttempt, classification, now, policy: deps.policy, random: deps.random });
  return { claim, attemptedAt, result, classification, plan };
}
