import {
  buildWebhookHeaders,
  classifyAttempt,
  deliver,
  planAfterAttempt,
  signingSecretsAt,
  withWebhookId,
  type AttemptClassification,
  type DeliveryPlan,
  type DeliveryResult,
  type RetryPolicy,
  type SigningKey,
  type SsrfGuard,
  type StoredSigningSecrets,
} from '@gw/webhooks';
import {
  ATTR_GATEWAY_OUTCOME,
  ATTR_GATEWAY_WEBHOOK_ATTEMPT,
  ATTR_GATEWAY_WEBHOOK_DELIVERY_ID,
  ATTR_GATEWAY_WEBHOOK_EVENT,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  failSpan,
  fromTraceParent,
  httpClientAttributes,
  inSpan,
  SpanKind,
} from '@gw/tracing';
import type { ClaimedDelivery } from './claims.ts';

export interface AttemptDeps {
  guard: SsrfGuard;
  policy: RetryPolicy;
  now: () => number;
  random?: () => number;
  /** The endpoint's signing secrets (opened from their sealed form; as text or as derived keys), with the previous one's expiry. */
  secretsFor(claim: ClaimedDelivery): StoredSigningSecrets<string | SigningKey>;
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
 * (a retry carries a newer timestamp); the delivery id is the same on every attempt, and is in the
 * posted body as webhook_id. While a rotated-out secret's overlap lasts (judged at the attempt's
 * own time), it signs beside the current one.
 *
 * The attempt is a client span in the trace kept with the row (the enqueue span's), so the post
 * to the customer ends the trace of the send that caused it. The span names the destination's
 * host only (a customer may put a token in the URL's path), and the customer is not sent our
 * traceparent: the delivery id is what identifies a post to them (docs/decisions.md).
 */
export async function attemptDelivery(claim: ClaimedDelivery, deps: AttemptDeps): Promise<AttemptRecord> {
  const attributes = {
    ...httpClientAttributes('POST', claim.destinationUrl),
    [ATTR_GATEWAY_WEBHOOK_DELIVERY_ID]: claim.deliveryId,
    [ATTR_GATEWAY_WEBHOOK_EVENT]: claim.event,
    [ATTR_GATEWAY_WEBHOOK_ATTEMPT]: claim.attempt,
  };
  return inSpan('@gw/webhooks-service', 'POST', { kind: SpanKind.CLIENT, attributes }, fromTraceParent(claim.traceParent), async ({ span }) => {
    const record = await postOnce(claim, deps);
    if (record.result.status !== null) span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, record.result.status);
    span.setAttribute(ATTR_GATEWAY_OUTCOME, record.classification.outcome);
    if (record.classification.outcome !== 'success') failSpan(span, record.result.error?.code ?? String(record.result.status ?? 'error'));
    return record;
  });
}

async function postOnce(claim: ClaimedDelivery, deps: AttemptDeps): Promise<AttemptRecord> {
  const attemptedAt = deps.now();
  const body = withWebhookId(claim.body, claim.deliveryId);
  const headers = buildWebhookHeaders({
    event: claim.event,
    deliveryId: claim.deliveryId,
    body,
    timestampSeconds: Math.floor(attemptedAt / 1000),
    secret: signingSecretsAt(deps.secretsFor(claim), attemptedAt),
    attempt: claim.attempt,
  });
  const result = await deliver({ url: claim.destinationUrl, body, headers, guard: deps.guard, timeoutMs: deps.policy.attemptTimeoutMs });
  const now = deps.now();
  const classification = classifyAttempt(result, now, deps.policy);
  const plan = planAfterAttempt({ attemptNumber: claim.roundAttempt, classification, now, policy: deps.policy, random: deps.random });
  return { claim, attemptedAt, result, classification, plan };
}
