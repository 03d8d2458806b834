// A test send from an instance's page: the form checked by the contract's own rules (phone,
// text, purposes), then the outcome of the guarded send read as the API answers it (toResponse),
// beside every rule the policy evaluated (the decision's reasons, as the policy log records them).
import { ApiError, isMessagePurpose, MESSAGE_MAX_LENGTH, MESSAGE_PURPOSES, normalizePhone, textProblem, type ErrorCode } from '@gw/contract';
import { toResponse, type SendProgress } from '@gw/send';

export interface TestSendForm {
  phone: string;
  message: string;
  purpose: string;
}

export interface TestSendOutcome {
  /** sent, pending, or refused / failed / undecided; as the API would answer. */
  status: string;
  /** The API's error code when it is not a success. */
  code: ErrorCode | null;
  message: string | null;
  log_id: number | null;
  message_id: string | null;
  decision: 'accepted' | 'rejected' | null;
  policy_version: string | null;
  rules: { rule: string; outcome: string; detail: string | null }[];
}

export const PURPOSES = MESSAGE_PURPOSES;

/** A refusal before anything is appended, with the code POST /api/send-message answers for it. */
export type FormRefusal = { code: ErrorCode; message: string };

/** The checked input, or why it is refused (the API's codes: nothing is appended or logged for these). */
export function checkTestSend(form: Partial<TestSendForm>): { phone: string; message: string; purpose: string } | FormRefusal {
  const phone = normalizePhone(form.phone?.trim() ?? '');
  if (!phone) return { code: 'validation_error', message: 'Enter the recipient in international format, e.g. +14155552671.' };
  const message = form.message ?? '';
  const problem = textProblem(message, MESSAGE_MAX_LENGTH);
  // As the API's schema: empty is refused; anything else is the policy's to judge.
  if (message === '') return { code: 'validation_error', message: 'Write the message to send.' };
  if (problem) return { code: 'validation_error', message: `The message ${problem}.` };
  const purpose = form.purpose ?? '';
  if (purpose === '') return { code: 'message_purpose_required', message: 'Choose the purpose of the message.' };
  if (!isMessagePurpose(purpose)) return { code: 'message_purpose_not_allowed', message: `This message purpose is not allowed. Allowed: ${PURPOSES.join(', ')}.` };
  return { phone, message, purpose };
}

export function testSendOutcome(progress: SendProgress, ids: { commandId: string; messageId: string }): TestSendOutcome {
  const answer = toResponse(progress, ids);
  const decision = progress.decision;
  const common = {
    decision: decision?.decision ?? null,
    policy_version: decision?.policy_version ?? null,
    rules: (decision?.reasons ?? []).map((r) => ({ rule: r.rule, outcome: r.outcome, detail: r.detail ?? null })),
  };
  if (!(answer instanceof ApiError)) return { ...common, status: answer.status, code: null, message: null, log_id: answer.log_id, message_id: answer.message_id };
  const status = decision?.decision === 'rejected' ? 'refused' : answer.code === 'gateway_send_failed' ? 'failed' : 'undecided';
  const logId = typeof answer.details.log_id === 'number' ? answer.details.log_id : (decision?.log_id ?? null);
  return { ...common, status, code: answer.code, message: answer.message, log_id: logId, message_id: decision?.message_id ?? ids.messageId };
}
