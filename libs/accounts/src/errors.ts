/** What kind of refusal an account operation ended in, for the caller to map (an exit code, an HTTP status). */
export type AccountErrorCode = 'not_found' | 'conflict' | 'invalid' | 'refused';

/**
 * An account operation refused what it was asked. The message is meant for whoever asked (an
 * operator, a customer): it never holds a secret or a phone number. Anything else an operation
 * throws is a failure to report generically.
 */
export class AccountError extends Error {
  constructor(
    readonly code: AccountErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'AccountError';
  }
}
