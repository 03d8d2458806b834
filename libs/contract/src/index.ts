export { ERROR_STATUS, ERROR_CODES, isErrorCode, statusOf, type ErrorCode } from './error-codes.ts';
export { ApiError, type ApiErrorBody } from './api-error.ts';
export { MESSAGE_PURPOSES, isMessagePurpose, type MessagePurpose } from './purposes.ts';
export * from './schemas.ts';
export { normalizePhone } from './phone.ts';
export { DEFAULT_PBX_TEMPLATES, TEMPLATE_EVENTS, renderTemplate, templateText, type TemplateValues } from './pbx-templates.ts';
export { SAFE_TEXT_PATTERN, SAFE_TEXT_RULE, textProblem, safeString, findUnsafeText } from './text.ts';
export { csvField, csvLine } from './csv.ts';
