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
