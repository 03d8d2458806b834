import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { QueueFull } from '@gw/batching';
import { ApiError } from '@gw/contract';
import { errorHandlerPlugin, toApiError } from './error-handler.ts';

describe('toApiError', () => {
  it('passes an ApiError through', () => {
    const error = new ApiError('invalid_instance', 'No such instance.', { field: 'instance_id' });
    expect(toApiError(error)).toBe(error);
  });

  it('answers an overloaded append queue with the contract\'s 500 internal_error, saying so', () => {
    const mapped = toApiError(new QueueFull(10_000));
    expect(mapped.toBody()).toMatchObject({ success: false, error: 'internal_error', details: { reason: 'overloaded', retry_after_s: 1 } });
    expect(mapped.status).toBe(500);
  });

  const fastifyError = (fields: Record<string, unknown>, message = 'framework error') => Object.assign(new Error(message), fields);

  it('maps a schema validation failure through fromValidation, with its context', () => {
    const mapped = toApiError(fastifyError({ validation: [{ keyword: 'pattern', instancePath: '/idempotency-key', params: {}, message: 'must match pattern' }], validationContext: 'headers', statusCode: 400 }));
    expect(mapped.status).toBe(422);
    expect(mapped.toBody()).toMatchObject({ error: 'validation_error', details: { field: 'Idempotency-Key', rule: 'pattern' } });
  });

  it('answers a media type with no parser 415 unsupported_media_type', () => {
    const mapped = toApiError(fastifyError({ code: 'FST_ERR_CTP_INVALID_MEDIA_TYPE', statusCode: 415 }));
    expect({ status: mapped.status, body: mapped.toBody() }).toEqual({
      status: 415,
      body: { success: false, error: 'unsupported_media_type', message: 'This endpoint requires Content-Type: application/json.', details: { expected: 'application/json' } },
    });
  });

  it('answers an empty or malformed JSON body 400 invalid_json, also when the parser throws a SyntaxError', () => {
    const expected = { status: 400, body: { success: false, error: 'invalid_json', message: 'The request body is not valid JSON.', details: { hint: 'Send a JSON object matching the documented request schema.' } } };
    for (const error of [
      fastifyError({ code: 'FST_ERR_CTP_EMPTY_JSON_BODY', statusCode: 400 }),
      fastifyError({ code: 'FST_ERR_CTP_INVALID_JSON_BODY', statusCode: 400 }),
      Object.assign(new SyntaxError('Unexpected token'), { statusCode: 400 }),
    ]) {
      const mapped = toApiError(error);
      expect({ status: mapped.status, body: mapped.toBody() }).toEqual(expected);
    }
    // A SyntaxError of our own (not the body parser's) is internal.
    expect(toApiError(new SyntaxError('Unexpected token')).code).toBe('internal_error');
  });

  it('answers a body over the limit 413 payload_too_large', () => {
    const mapped = toApiError(fastifyError({ code: 'FST_ERR_CTP_BODY_TOO_LARGE', statusCode: 413 }));
    expect({ status: mapped.status, body: mapped.toBody() }).toEqual({ status: 413, body: { success: false, error: 'payload_too_large', message: 'The request body is too large.', details: {} } });
  });

  it('keeps the status of any other client error, as validation_error naming its code (or bad_request)', () => {
    const timedOut = toApiError(fastifyError({ code: 'FST_ERR_REQUEST_TIMEOUT', statusCode: 408 }, 'Request timeout'));
    expect({ status: timedOut.status, body: timedOut.toBody() }).toEqual({
      status: 408,
      body: { success: false, error: 'validation_error', message: 'The request could not be processed.', details: { reason: 'FST_ERR_REQUEST_TIMEOUT' } },
    });
    expect(toApiError(fastifyError({ statusCode: 400 })).toBody().details).toEqual({ reason: 'bad_request' });
    expect(toApiError(fastifyError({ statusCode: 503 })).status).toBe(500);
  });

  it('never lets an unexpected error\'s message out', () => {
    const mapped = toApiError(new Error('duplicate key value violates unique constraint "secret_table_pkey" +14155552671'));
    expect(JSON.stringify(mapped.toBody())).not.toMatch(/secret_table|4155552671/);
    expect(mapped.toBody().error).toBe('internal_error');
  });
});

describe('the error handler', () => {
  it('adds Retry-After to an overloaded answer', async () => {
    const app = Fastify();
    await app.register(errorHandlerPlugin);
    app.get('/busy', async () => {
      throw new QueueFull(1);
    });
    const answer = await app.inject({ method: 'GET', url: '/busy' });
    expect(answer.statusCode).toBe(500);
    expect(answer.headers['retry-after']).toBe('1');
    expect(answer.json()).toMatchObject({ error: 'internal_error', details: { reason: 'overloaded' } });
    await app.close();
  });
});
