// /inbound-logs (received messages, search, pages). (Issue 17: being built.)
import type { FastifyInstance } from 'fastify';
import type { DashboardDeps } from '../index.ts';

export async function inboundRoutes(_app: FastifyInstance, _deps: DashboardDeps): Promise<void> {}
