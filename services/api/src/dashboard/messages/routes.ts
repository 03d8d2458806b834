// /messages (search) and the timeline of one message. (Issue 17: being built.)
import type { FastifyInstance } from 'fastify';
import type { DashboardDeps } from '../index.ts';

export async function messageRoutes(_app: FastifyInstance, _deps: DashboardDeps): Promise<void> {}
