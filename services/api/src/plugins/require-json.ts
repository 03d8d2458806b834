import type { FastifyRequest } from 'fastify';
import { ApiError } from '@gw/contract';

/** The send endpoint takes application/json only (a charset parameter is fine). */
export async function requireJson(request: FastifyRequest): Promise<void> {
  const type = request.headers['content-type'];
  const mediaType = typeof type === 'string' ? type.split(';')[0]!.trim().toLowerCase() : '';
  if (mediaType !== 'application/json') {
    throw new ApiError('unsupported_media_type', 'This endpoint requires Content-Type: application/json.', {
      expected: 'application/json',
      received: mediaType || null,
    });
  }
}
