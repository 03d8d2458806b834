import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { MESSAGE_PURPOSES, SAFE_TEXT_RULE, SendMessageRequestSchema } from '@gw/contract';
import { fromValidation } from './validation-errors.ts';

// Issues shaped as Ajv reports them (fastify's validator is Ajv with allErrors).
const required = (missingProperty: string, instancePath = '') => ({ keyword: 'required', instancePath, params: { missingProperty }, message: `must have required property '${missingProperty}'` });
const additional = (additionalProperty: string) => ({ keyword: 'additionalProperties', instancePath: '', params: { additionalProperty }, message: 'must NOT have additional properties' });
const at = (keyword: string, instancePath: string, message?: string) => ({ keyword, instancePath, params: {}, ...(message === undefined ? {} : { message }) });

const answer = (error: ReturnType<typeof fromValidation>) => ({ status: error.status, body: error.toBody() });

describe('fromValidation', () => {
  it('a missing field is validation_error 422 naming it', () => {
    expect(answer(fromValidation([required('phone')], 'body'))).toEqual({
      status: 422,
      body: {
        success: false,
        error: 'validation_error',
        message: 'Invalid request: phone is required.',
        details: { field: 'phone', rule: 'required', errors: [{ field: 'phone', rule: 'required', message: 'phone is required' }] },
      },
    });
  });

  it('a property beyond the contract names the property', () => {
    expect(answer(fromValidation([additional('campaign')], 'body')).body).toEqual({
      success: false,
      error: 'validation_error',
      message: 'Invalid request: campaign is not an allowed property.',
      details: { field: 'campaign', rule: 'additionalProperties', errors: [{ field: 'campaign', rule: 'additionalProperties', message: 'campaign is not an allowed property' }] },
    });
  });

  it('a wrong type names the field by its path, nested paths with dots', () => {
    expect(fromValidation([at('type', '/message', 'must be string')], 'body').toBody()).toMatchObject({
      message: 'Invalid request: message must be string.',
      details: { field: 'message', rule: 'type' },
    });
    expect(fromValidation([at('type', '/a/b/0', 'must be string')], 'body').toBody().details).toMatchObject({ field: 'a.b.0' });
    expect(fromValidation([at('maxLength', '')], 'body').toBody().details).toMatchObject({ errors: [{ field: '', rule: 'maxLength', message: 'the body is invalid' }] });
  });

  it('a field without a message from the validator is "invalid"', () => {
    expect(fromValidation([at('format', '/phone')], 'body').message).toBe('Invalid request: phone is invalid.');
  });

  it('the body itself (not an object) is described as the body', () => {
    expect(fromValidation([at('type', '', 'must be object')], 'body').toBody()).toMatchObject({
      error: 'validation_error',
      message: 'Invalid request: the body must be object.',
      details: { field: '', rule: 'type' },
    });
  });

  it('a text pattern is described by the safe-text rule, not its regex', () => {
    expect(fromValidation([at('pattern', '/message', 'must match pattern "^[^\\u0000]*$"')], 'body').message).toBe(`Invalid request: message must be text ${SAFE_TEXT_RULE}.`);
  });

  it('a malformed Idempotency-Key header is named as the header, with the validator\'s message', () => {
    expect(answer(fromValidation([at('pattern', '/idempotency-key', 'must match pattern "^[\\x21-\\x7E]{1,255}$"')], 'headers'))).toEqual({
      status: 422,
      body: {
        success: false,
        error: 'validation_error',
        message: 'Invalid request: Idempotency-Key must match pattern "^[\\x21-\\x7E]{1,255}$".',
        details: {
          field: 'Idempotency-Key',
          rule: 'pattern',
          errors: [{ field: 'Idempotency-Key', rule: 'pattern', message: 'Idempotency-Key must match pattern "^[\\x21-\\x7E]{1,255}$"' }],
        },
      },
    });
    // Only in the headers: a body field of that name keeps its name.
    expect(fromValidation([at('type', '/idempotency-key', 'must be string')], 'body').toBody().details).toMatchObject({ field: 'idempotency-key' });
  });

  it('a missing or empty message_purpose alone is message_purpose_required, listing the allowed purposes', () => {
    const expected = {
      status: 422,
      body: { success: false, error: 'message_purpose_required', message: 'message_purpose is required.', details: { field: 'message_purpose', allowed: [...MESSAGE_PURPOSES] } },
    };
    expect(answer(fromValidation([required('message_purpose')], 'body'))).toEqual(expected);
    expect(answer(fromValidation([at('minLength', '/message_purpose', 'must NOT have fewer than 1 characters')], 'body'))).toEqual(expected);
    // An empty purpose fails the list too; whichever failure comes first, it was not given.
    expect(answer(fromValidation([at('enum', '/message_purpose', 'must be equal to one of the allowed values'), at('minLength', '/message_purpose', 'must NOT have fewer than 1 characters')], 'body'))).toEqual(expected);
  });

  it('a purpose outside the list alone is message_purpose_not_allowed', () => {
    expect(answer(fromValidation([at('enum', '/message_purpose', 'must be equal to one of the allowed values')], 'body'))).toEqual({
      status: 422,
      body: { success: false, error: 'message_purpose_not_allowed', message: 'This message purpose is not allowed.', details: { field: 'message_purpose', allowed: [...MESSAGE_PURPOSES] } },
    });
  });

  it('a purpose of the wrong type is a plain validation_error', () => {
    expect(fromValidation([at('type', '/message_purpose', 'must be string')], 'body').toBody()).toMatchObject({ error: 'validation_error', details: { field: 'message_purpose', rule: 'type' } });
  });

  it('a purpose problem beside others is a validation_error naming the first and listing all', () => {
    const error = fromValidation([required('phone'), required('message_purpose')], 'body');
    expect(error.toBody()).toMatchObject({
      error: 'validation_error',
      details: { field: 'phone', rule: 'required', errors: [{ field: 'phone' }, { field: 'message_purpose', rule: 'required' }] },
    });
  });

  it('no issue at all is still a validation_error, naming nothing', () => {
    expect(answer(fromValidation([]))).toEqual({
      status: 422,
      body: { success: false, error: 'validation_error', message: 'Invalid request.', details: { field: null, rule: null, errors: [] } },
    });
  });

  it('maps what the contract\'s own schema reports, every failing field listed', () => {
    const validate = new Ajv({ allErrors: true, strict: false }).compile(SendMessageRequestSchema);
    expect(validate({ instance_id: 'ins_1', phone: 42, message: 'hi', message_purpose: 'marketing', extra: 1 })).toBe(false);
    const error = fromValidation(validate.errors as Parameters<typeof fromValidation>[0], 'body');
    expect(error.code).toBe('validation_error');
    expect((error.details.errors as Array<{ field: string }>).map((e) => e.field).sort()).toEqual(['extra', 'message_purpose', 'phone']);
  });
});
