import type { FastifyInstance } from 'fastify';

/** Evolution's GET / welcome answer, used by clients as a smoke check. */
export function registerRootRoutes(app: FastifyInstance): void {
  app.get('/', async (request) => ({
    status: 200,
    message: 'Welcome to the Evolution API, it is working!',
    version: '2.3.0-simulator',
    clientName: 'evolution_exchange',
    manager: `${request.protocol}://${request.host}/manager`,
    documentation: 'https://doc.evolution-api.com',
    simulator: true,
  }));
}
