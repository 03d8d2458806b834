// Public pages: what the gateway allows and refuses, and how each rule works. No sign-in, no
// guard: anyone may read them before signing up. Built once from the policy the engine decides
// with (messaging-rules.ts), which does not change while the process runs.
import type { FastifyInstance } from 'fastify';
import { can, PERMISSIONS, ROLES, type Permission } from '../roles/permissions.ts';
import { publicPolicyPages } from '../messaging-rules.ts';
import type { DashboardDeps } from '../deps.ts';

export async function publicRoutes(app: FastifyInstance, deps: DashboardDeps): Promise<void> {
  const data = {
    ...publicPolicyPages(deps.messaging),
    // The dashboard's own matrix (roles/permissions.ts), for who may read the policy log.
    roles: ROLES,
    permissions: (Object.keys(PERMISSIONS) as Permission[]).map((id) => ({ id, roles: ROLES.map((role) => can(role, id)) })),
    logReaders: PERMISSIONS['policy_log.read'],
  };
  app.get('/acceptable-use', async (_request, reply) => reply.page('public/acceptable-use', { title: 'Acceptable use', ...data }));
  app.get('/docs/responsible-messaging', async (_request, reply) => reply.page('public/responsible-messaging', { title: 'Responsible messaging', ...data }));
}
