// /policy-log (filters), its export and its verify report. (Issue 17: being built.)
import type { FastifyInstance } from 'fastify';
import type { DashboardDeps } from '../index.ts';

export async function policyLogRoutes(_app: FastifyInstance, _deps: DashboardDeps): Promise<void> {}
