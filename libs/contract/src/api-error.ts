import { statusOf, type ErrorCode } from './error-codes.ts';

/** The one error type handlers throw; the error handler turns it into an ApiError body (spec 2.3). */
export class ApiError extends Error {
  readonly status: number;

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details: Record<string, unknown> = {},
    status?: number,
  ) {
    super(message);
    this.name = 'ApiError';
    this.status = status ?? statusOf(code);
  }

  toBody(): ApiErrorBody {
    return { success: false, error: this.code, message: this.message, details: this.details };
  }
}

export interface ApiErrorBody {
  success: false;
  error: ErrorCode;
  message: string;
  details: Record<string, unknown>;
}
