// The customer's instances: the list, creating one (on the configured instance manager, its
// event webhook pointed at the gateway) and deleting one. The manage page, its live state and the
// test sends are in manage-routes.ts and test-send-routes.ts.
import { AccountError, createInstance, deleteInstance, listInstances, setInstanceWebhook } from '@gw/accounts';
import { LICENSE_REQUIRED_WORDS, ManagerHttpError } from '@gw/evolution';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { recordChange } from '../appends.ts';
import { can } from '../roles/permissions.ts';
import { member, PageError, requirePermission } from '../sessions/guards.ts';
import { connectionOf, STATE_LABELS, stateTone } from './live-state.ts';
import { manageRoutes } from './manage-routes.ts';
import { managePage } from './manage-page.ts';
import { NO_SUCH_INSTANCE, openOwn, ownInstance } from '../own-instance.ts';
import { form, text } from '../forms.ts';
import { testSendRoutes } from './test-send-routes.ts';
import type { DashboardDeps } from '../deps.ts';
import type { InstancesPage } from './pages.ts';
import { instanceGuards } from '../usage/data.ts';
import { restrictionNotices } from '../usage/guard-view.ts';

export const NAME_RULE = 'letters, digits, ".", "_" and "-", at most 64';

export async function instanceRoutes(app: FastifyInstance, deps: DashboardDeps): Promise<void> {
  const listPage = async (request: FastifyRequest, extra: Partial<InstancesPage> = {}): Promise<InstancesPage> => {
    const customerId = member(request).customer_id;
    const instances = await listInstances(deps.pool, customerId);
    // Each asked of its manager at once, briefly: a slow manager shows "not reachable", never a hung page.
    const states = await Promise.all(instances.map(async (i) => connectionOf(await openOwn(deps.pool, deps.box, i))));
    const rows = instances.map((instance, n) => ({ ...instance, state: states[n]!, label: STATE_LABELS[states[n]!] ?? states[n]!, tone: stateTone(states[n]!) }));
    const deleted = (request.query as { done?: string }).done === 'deleted';
    const restrictions = restrictionNotices(await instanceGuards(deps.pool, customerId), instances, Date.now());
    return { title: 'Instances', instances: rows, canManage: can(member(request).role, 'instances.manage'), nameRule: NAME_RULE, name: '', error: null, deleted, restrictions, ...extra };
  };

  app.get('/instances', { preHandler: requirePermission('dashboard.view') }, async (request, reply) => reply.page('instances/instances', await listPage(request)));

  app.post<{ Body: { name?: string } }>('/instances', { preHandler: requirePermission('instances.manage'), schema: form({ name: text(200) }), attachValidation: true }, async (request, reply) => {
    const name = (request.body?.name ?? '').trim();
    const again = async (status: number, error: string) => reply.code(status).page('instances/instances', await listPage(request, { name, error }));
    if (request.validationError || name === '') return again(400, `Give the instance a name: ${NAME_RULE}.`);
    let created: Awaited<ReturnType<typeof createInstance>>;
    try {
      created = await createInstance(deps.pool, deps.box, {
        customerId: member(request).customer_id,
        name,
        managerUrl: deps.instanceManager.url,
        managerApiKey: deps.instanceManager.apiKey,
        createOnManager: true,
      });
    } catch (error) {
      if (error instanceof AccountError) return again(error.code === 'conflict' ? 409 : 400, error.message);
      const code = error instanceof ManagerHttpError ? error.code : undefined;
      request.log.warn({ err: { type: (error as Error).name, code } }, 'instance manager did not create an instance');
      if (code === 'license_required') return again(502, LICENSE_REQUIRED_WORDS);
      if (code === 'name_in_use') return again(502, 'The instance manager already has an instance by that name that the gateway did not create. Choose another name, or ask whoever runs the manager to remove it.');
      return again(502, 'The instance manager could not create the instance just now. Try again in a moment.');
    }
    await recordChange(deps.appends.audit, request, { action: 'instance.created', subjectId: created.instance_id, instanceId: created.instance_id, details: { name } });
    // So the gateway hears the instance's connection and messages from its manager.
    let done = 'created';
    try {
      await setInstanceWebhook(deps.pool, deps.box, { instanceId: created.instance_id, baseUrl: deps.publicBaseUrl });
    } catch (error) {
      if (!(error instanceof AccountError)) throw error;
      request.log.warn({ instance_id: created.instance_id }, 'instance manager refused the event webhook');
      done = 'webhook_failed';
    }
    return reply.redirect(`/instances/${encodeURIComponent(created.instance_id)}/manage?done=${done}`, 303);
  });

  app.post<{ Params: { id: string }; Body: { confirm?: string } }>(
    '/instances/:id/delete',
    { preHandler: requirePermission('instances.manage'), schema: form({ confirm: text(200) }), attachValidation: true },
    async (request, reply) => {
      const instance = await ownInstance(deps.pool, request, request.params.id);
      const refuse = async (status: number, error: string) => reply.code(status).page('instances/instance-manage', await managePage(deps.pool, deps.box, request, instance, { error }));
      if ((request.body?.confirm ?? '').trim() !== instance.name) return refuse(400, `To delete it, type the instance's name (${instance.name}) in the box.`);
      try {
        await deleteInstance(deps.pool, deps.box, { customerId: member(request).customer_id, instanceId: instance.id });
      } catch (error) {
        if (!(error instanceof AccountError)) throw error;
        if (error.code === 'not_found') throw new PageError(404, NO_SUCH_INSTANCE.title, NO_SUCH_INSTANCE.message);
        return refuse(error.code === 'conflict' ? 409 : 502, error.message);
      }
      await recordChange(deps.appends.audit, request, { action: 'instance.deleted', subjectId: instance.id, instanceId: instance.id, details: { name: instance.name } });
      return reply.redirect('/instances?done=deleted', 303);
    },
  );

  manageRoutes(app, deps);
  testSendRoutes(app, deps);
}
