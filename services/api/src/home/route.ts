import type { FastifyInstance } from 'fastify';

/** GET /: a smoke response for reachability checks. */
export async function homeRoutes(app: FastifyInstance): Promise<void> {
  app.get('/', { schema: { hide: true } }, async () => ({
    service: 'chat-gateway',
    status: 'ok',
    contract: '/openapi.json',
  }));
}
