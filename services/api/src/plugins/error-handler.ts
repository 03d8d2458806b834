import fp from 'fastify-plugin';
import type { FastifyError, FastifyInstance } from 'fastify';
import { QueueFull } from '@gw/batching';
import { ApiError } from '@gw/contract';
import { describeError } from '@gw/observability';
import { fromValidation } from './validation-errors.ts';

const JSON_PARSE_ERRORS = new Set(['FST_ERR_CTP_EMPTY_JSON_BODY', 'FST_ERR_CTP_INVALID_JSON_BODY']);

/** Turns anything thrown into an ApiError. Internals (stack traces, SQL, secrets) never leave the process. */
export function toApiError(error: FastifyError | Error): ApiError {
  if (error instanceof ApiError) return error;
  // The contract has no 503 for the send endpoint: an overloaded gateway is a 500 that says so (docs/decisions.md).
  if (error instanceof QueueFull) {
    return new ApiError('internal_error', 'The gateway is overloaded and did not record this request. Retry after a second, with the same Idempotency-Key.', { reason: 'overloaded', retry_after_s: 1 });
  }
  const fastifyError = error as FastifyError;
  if (fastifyError.validation) return fromValidation(fastifyError.validation, fastifyError.validationContext);
  const code = fastifyError.code;
  if (code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
    return new ApiError('unsupported_media_type', 'This endpoint requires Content-Type: application/json.', { expected: 'application/json' });
  }
  if ((code && JSON_PARSE_ERRORS.has(code)) || (error instanceof SyntaxError && fastifyError.statusCode === 400)) {
    return new ApiError('invalid_json', 'The request body is not valid JSON.', { hint: 'Send a JSON object matching the documented request schema.' });
  }
  if (code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
    return new ApiError('payload_too_large', 'The request body is too large.', {});
  }
  if (fastifyError.statusCode !== undefined && fastifyError.statusCode >= 400 && fastifyError.statusCode < 500) {
    return new ApiError('validation_error', 'The request could not be processed.', { reason: code ?? 'bad_request' }, fastifyError.statusCode);
  }
  return new ApiError('internal_error', 'An unexpected error occurred. It has been logged; please retry later.', {});
}

export const errorHandlerPlugin = fp(
  async (app: FastifyInstance) => {
    app.setErrorHandler((thrown, request, reply) => {
      const error = thrown instanceof Error ? thrown : new Error(String(thrown));
      const apiError = toApiError(error);
      if (error instanceof QueueFull) void reply.header('retry-after', '1');
      if (apiError.status >= 500) {
        // Message and code only: a stack trace may carry internals and must not reach the logs.
        request.log.error({ error: describeError(error) }, 'request failed');
      }
      return reply.code(apiError.status).send(apiError.toBody());
    });
    app.setNotFoundHandler((request, reply) =>
      reply.code(404).send({
        success: false,
        error: 'not_found',
        message: `No route ${request.method} ${request.url.split('?')[0]}.`,
        details: { method: request.method, path: request.url.split('?')[0] },
      }),
    );
  },
  { name: 'error-handler' },
);
