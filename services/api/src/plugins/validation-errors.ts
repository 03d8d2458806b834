import { ApiError, MESSAGE_PURPOSES, SAFE_TEXT_RULE } from '@gw/contract';

interface ValidationIssue {
  keyword: string;
  instancePath: string;
  params: Record<string, unknown>;
  message?: string;
}

function fieldOf(issue: ValidationIssue): string {
  if (issue.keyword === 'required') return String(issue.params.missingProperty);
  if (issue.keyword === 'additionalProperties') return String(issue.params.additionalProperty);
  return issue.instancePath.replace(/^\//, '').replace(/\//g, '.');
}

function describe(issue: ValidationIssue, field: string): string {
  if (issue.keyword === 'required') return `${field} is required`;
  if (issue.keyword === 'additionalProperties') return `${field} is not an allowed property`;
  if (field === '') return `the body ${issue.message ?? 'is invalid'}`;
  // Every text pattern of the contract is the safe-text rule; its regex would mean nothing to a reader.
  if (issue.keyword === 'pattern' && field !== 'Idempotency-Key') return `${field} must be text ${SAFE_TEXT_RULE}`;
  return `${field} ${issue.message ?? 'is invalid'}`;
}

/**
 * Maps JSON-schema failures to the contract's codes: a missing or empty message_purpose is
 * message_purpose_required, a purpose outside the allowed list is message_purpose_not_allowed,
 * anything else (including unknown properties) is validation_error naming every field.
 */
export function fromValidation(issues: ValidationIssue[], context?: string): ApiError {
  const errors = issues.map((issue) => {
    const raw = fieldOf(issue);
    const field = context === 'headers' && raw === 'idempotency-key' ? 'Idempotency-Key' : raw;
    return { field, rule: issue.keyword, message: describe(issue, field) };
  });
  const others = errors.filter((e) => e.field !== 'message_purpose');
  if (others.length === 0 && errors.length > 0) {
    const purpose = errors[0]!;
    // An empty purpose fails both minLength and enum: it was not given, so it is required.
    if (errors.some((e) => e.rule === 'required' || e.rule === 'minLength')) {
      return new ApiError('message_purpose_required', 'message_purpose is required.', {
        field: 'message_purpose',
        allowed: MESSAGE_PURPOSES,
      });
    }
    if (purpose.rule === 'enum') {
      return new ApiError('message_purpose_not_allowed', 'This message purpose is not allowed.', {
        field: 'message_purpose',
        allowed: MESSAGE_PURPOSES,
      });
    }
  }
  const first = errors[0];
  return new ApiError('validation_error', first ? `Invalid request: ${first.message}.` : 'Invalid request.', {
    field: first?.field ?? null,
    rule: first?.rule ?? null,
    errors,
  });
}
