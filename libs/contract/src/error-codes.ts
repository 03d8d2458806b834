// The complete error enumeration of the v1 contract (spec 7.3) with the HTTP status each one
// answers with. The status of missing_phone and missing_message_text is ours: 400 (docs/decisions.md).
export const ERROR_STATUS = {
  unsupported_media_type: 415,
  invalid_api_key: 401,
  revoked_api_key: 401,
  invalid_json: 400,
  validation_error: 422,
  module_not_enabled: 403,
  active_plan_required: 403,
  invalid_instance: 404,
  message_purpose_required: 422,
  message_purpose_not_allowed: 422,
  recipient_suppressed: 403,
  daily_message_limit_exceeded: 429,
  monthly_message_limit_exceeded: 429,
  sending_throttled: 429,
  instance_paused_for_review: 423,
  policy_violation: 403,
  gateway_send_failed: 502,
  internal_error: 500,
  invalid_pbx_webhook: 401,
  payload_too_large: 413,
  webhook_rate_limited: 429,
  missing_phone: 400,
  missing_message_text: 400,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export const ERROR_CODES = Object.keys(ERROR_STATUS) as ErrorCode[];

export function isErrorCode(value: string): value is ErrorCode {
  return Object.hasOwn(ERROR_STATUS, value);
}

export function statusOf(code: ErrorCode): number {
  return ERROR_STATUS[code];
}
