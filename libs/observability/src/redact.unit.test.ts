import { describe, expect, it } from 'vitest';
import { describeError, maskPhone, maskPhones } from './redact.ts';

describe('masking', () => {
  it('keeps the first and last two digits of a phone number', () => {
    expect(maskPhone('+14155552671')).toBe('+1********71');
    expect(maskPhone('5511988887777')).toBe('5**********77');
  });

  it('masks every phone-like run in a text and leaves short numbers alone', () => {
    expect(maskPhones('to +1 (415) 555-2671 at offset 1234 and 14155552671@s.whatsapp.net')).toBe('to +1********71 at offset 1234 and 1********71@s.whatsapp.net');
  });

  it('describes an error in one line: name, code, message with phones masked, never the stack', () => {
    const error = Object.assign(new Error('invalid input for +14155552671'), { code: '22P02' });
    const line = describeError(error);
    expect(line).toBe('Error [22P02]: invalid input for +1********71');
    expect(line).not.toContain('at ');
    expect(describeError('plain 4155552671')).toBe('4*******71'.replace(/^/, 'plain '));
  });

  it("names a slonik error by its class and the SQLSTATE of its cause, never the query's values", () => {
    class StatementTimeoutError extends Error {
      values = ['+14155552671'];
    }
    const error = new StatementTimeoutError('Statement has been cancelled due to a statement_timeout.', { cause: Object.assign(new Error('canceling statement'), { code: '57014' }) });
    expect(describeError(error)).toBe('StatementTimeoutError [57014]: Statement has been cancelled due to a statement_timeout.');
  });
});
