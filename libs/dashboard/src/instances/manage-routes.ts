// An instance's manage page and what it does: its connection state (live through
// GET /instances/:id/state, polled by assets/instance-live.js), pairing a phone and disconnecting it.
import { normalizePhone } from '@gw/contract';
import { LICENSE_REQUIRED_WORDS, logoutInstance, ManagerHttpError, restartPairing, waitUntilClosed } from '@gw/evolution';
import type { FastifyInstance } from 'fastify';
import { recordChange } from '../appends.ts';
import { can } from '../roles/permissions.ts';
import { member, PageError, requirePermission } from '../sessions/guards.ts';
import { liveState } from './live-state.ts';
import { managePage } from './manage-page.ts';
import { findOwnInstance, NO_SUCH_INSTANCE, openOwn, ownInstance } from '../own-instance.ts';
import { form } from '../forms.ts';
import type { DashboardDeps } from '../deps.ts';

const managerDown = () => new PageError(502, 'Instance manager not answering', 'The instance manager did not answer just now. Try again in a moment.');
const managerNotActivated = () => new PageError(502, 'Instance manager not activated', LICENSE_REQUIRED_WORDS);
const isCode = (error: unknown, code: ManagerHttpError['code']) => error instanceof ManagerHttpError && error.code === code;

export function manageRoutes(app: FastifyInstance, deps: DashboardDeps): void {
  const manageUrl = (id: string, done?: string) => `/instances/${encodeURIComponent(id)}/manage${done ? `?done=${done}` : ''}`;

  app.get<{ Params: { id: string }; Querystring: { tab?: string; done?: string } }>('/instances/:id/manage', { preHandler: requirePermission('dashboard.view') }, async (request, reply) => {
    const instance = await ownInstance(deps.pool, request, request.params.id);
    return reply.page('instances/instance-manage', await managePage(deps.pool, deps.box, request, instance));
  });

  // JSON for the live script; not a page, so its refusals are JSON too.
  app.get<{ Params: { id: string } }>('/instances/:id/state', { preHandler: requirePermission('dashboard.view') }, async (request, reply) => {
    const instance = await findOwnInstance(deps.pool, request, request.params.id);
    reply.header('cache-control', 'no-store');
    if (!instance) return reply.code(404).send({ error: 'not_found', message: NO_SUCH_INSTANCE.message });
    return liveState(await openOwn(deps.pool, deps.box, instance), { withCodes: can(member(request).role, 'instances.manage') });
  });

  // Starts pairing (again): a new QR code, or with the phone's number a pairing code to type on it.
  app.post<{ Params: { id: string }; Body: { phone?: string } }>(
    '/instances/:id/connect',
    { preHandler: requirePermission('instances.manage'), schema: form({ phone: { type: 'string', maxLength: 40 } }), attachValidation: true },
    async (request, reply) => {
      const instance = await ownInstance(deps.pool, request, request.params.id);
      const raw = (request.body?.phone ?? '').trim();
      const phone = raw === '' ? undefined : normalizePhone(raw);
      if (phone === null || request.validationError) {
        return reply.code(400).page('instances/instance-manage', await managePage(deps.pool, deps.box, request, instance, { error: 'Enter the phone number in international format, e.g. +14155552671, or leave it empty for a QR code.' }));
      }
      const managed = await openOwn(deps.pool, deps.box, instance);
      try {
        // A pairing already under way keeps its codes and ignores a number: restartPairing ends it
        // and waits until the manager has closed it, so this one starts afresh.
        await restartPairing(managed.managerUrl, managed.apiKey, managed.managerInstance, phone, { closeWithinMs: deps.settings.pairingCloseWaitMs });
      } catch (error) {
        if (isCode(error, 'license_required')) throw managerNotActivated();
        if (isCode(error, 'not_closed')) {
          const message = 'The instance manager did not end the pairing under way in time, so a new one could not start. Wait a few seconds and try again.';
          return reply.code(502).page('instances/instance-manage', await managePage(deps.pool, deps.box, request, instance, { error: message }));
        }
        throw managerDown();
      }
      await recordChange(deps.appends.audit, request, { action: 'instance.pairing_started', subjectId: instance.id, instanceId: instance.id, details: { pairing_code: phone !== undefined } });
      return reply.redirect(manageUrl(instance.id, 'pairing'), 303);
    },
  );

  app.post<{ Params: { id: string } }>('/instances/:id/disconnect', { preHandler: requirePermission('instances.manage'), schema: form({}) }, async (request, reply) => {
    const instance = await ownInstance(deps.pool, request, request.params.id);
    const managed = await openOwn(deps.pool, deps.box, instance);
    try {
      await logoutInstance(managed.managerUrl, managed.apiKey, managed.managerInstance);
      // Evolution 2.3 answers before the logout is done: wait (bounded) so the page shows it closed;
      // if it takes longer, the live page follows it.
      await waitUntilClosed(managed.managerUrl, managed.apiKey, managed.managerInstance, deps.settings.pairingCloseWaitMs).catch(() => undefined);
    } catch (error) {
      // 400: Evolution's answer for an instance that is not connected; nothing left to do.
      if (isCode(error, 'license_required')) throw managerNotActivated();
      if (!(error instanceof ManagerHttpError && error.status === 400)) throw managerDown();
    }
    await recordChange(deps.appends.audit, request, { action: 'instance.disconnected', subjectId: instance.id, instanceId: instance.id });
    return reply.redirect(manageUrl(instance.id, 'disconnected'), 303);
  });
}
