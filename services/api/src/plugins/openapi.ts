import fp from 'fastify-plugin';
import swagger from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import { SHARED_SCHEMAS } from '@gw/contract';

export const OPENAPI_INFO = {
  title: 'Guarded Chat-Messaging Gateway API',
  version: '1.0.0',
  description:
    'Send guarded transactional, operational, support, internal-team and authentication messages through a customer-owned paired instance. Every send passes responsible-messaging checks and is recorded in an auditable policy log.',
};

/** The v1 contract, generated from the same JSON schemas the routes validate with. */
export const openapiPlugin = fp(
  async (app: FastifyInstance, options: { serverUrl: string }) => {
    for (const schema of SHARED_SCHEMAS) app.addSchema(schema);
    await app.register(swagger, {
      openapi: {
        openapi: '3.0.3',
        info: OPENAPI_INFO,
        servers: [{ url: options.serverUrl, description: 'base_url' }],
        components: { securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', description: 'Customer API key' } } },
      },
      refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`) },
    });
    app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  },
  { name: 'openapi' },
);
