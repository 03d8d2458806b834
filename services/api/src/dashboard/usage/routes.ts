// /usage (sends against the plan, velocity, opt-outs, review pauses, charts, a request for higher limits). (Issue 17: being built.)
import type { FastifyInstance } from 'fastify';
import type { DashboardDeps } from '../index.ts';

export async function usageRoutes(_app: FastifyInstance, _deps: DashboardDeps): Promise<void> {}
