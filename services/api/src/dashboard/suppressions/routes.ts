// /suppressed-recipients (opt-outs, manual suppressions, their history, CSV). (Issue 17: being built.)
import type { FastifyInstance } from 'fastify';
import type { DashboardDeps } from '../index.ts';

export async function suppressionRoutes(_app: FastifyInstance, _deps: DashboardDeps): Promise<void> {}
