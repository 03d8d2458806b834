// @gw/send: the guarded send path, one for every way a message is asked for (POST /api/send-message,
// the PBX webhook, the dashboard's test sends). See README.md.
export { requestSend, type SendDedupe, type SendDeps, type SendIds, type SendInput, type SendInstance, type SendWaited } from './request-send.ts';
export { claimIdempotencyKey, IDEMPOTENCY_KEY_PATTERN, requestHash, type IdempotencyClaim } from './idempotency.ts';
export { appendRule, type AppendRule, type SendClaim } from './reappend.ts';
export { failedRuleDetails, isFinal, toResponse, type SendProgress, type SendSuccessBody } from './outcome.ts';
export { commandDecided, loadProgress, loadProgressMany } from './progress-read.ts';
export { ReplyRouter, type ReplyWaiter } from './reply-router.ts';
