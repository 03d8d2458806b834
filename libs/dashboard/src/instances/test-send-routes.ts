// POST /instances/:id/test-send: one message through the same guarded path as
// POST /api/send-message (requestSend: appended to customer-events, decided by the policy engine,
// delivered through the instance), and its outcome on the instance's page.
import type { FastifyInstance } from 'fastify';
import { requestSend } from '@gw/send';
import { member, requirePermission } from '../sessions/guards.ts';
import { managePage } from './manage-page.ts';
import { ownInstance } from '../own-instance.ts';
import { form } from '../forms.ts';
import { checkTestSend, testSendOutcome, type TestSendForm } from './test-send.ts';
import type { DashboardDeps } from '../deps.ts';

// Bounds only: the contract's own rules (checkTestSend) say what is refused and with which code.
const field = (maxLength: number) => ({ type: 'string', maxLength });

export function testSendRoutes(app: FastifyInstance, deps: DashboardDeps): void {
  app.post<{ Params: { id: string }; Body: Partial<TestSendForm> }>(
    '/instances/:id/test-send',
    { preHandler: requirePermission('instances.test_send'), schema: form({ phone: field(64), message: field(8192), purpose: field(64) }), attachValidation: true },
    async (request, reply) => {
      const instance = await ownInstance(deps.pool, request, request.params.id);
      const entered = { phone: request.body?.phone ?? '', message: request.body?.message ?? '', purpose: request.body?.purpose ?? '' };
      const checked = request.validationError ? { code: 'validation_error' as const, message: 'The phone, message or purpose is too long.' } : checkTestSend(entered);
      if ('code' in checked) {
        return reply.code(400).page('instances/instance-manage', await managePage(deps.pool, deps.box, request, instance, { testSend: { form: entered, outcome: null, refusal: checked } }));
      }
      const { ids, progress } = await requestSend(deps.send, {
        customerId: member(request).customer_id,
        instance: { id: instance.id, name: instance.name, managerInstance: instance.manager_instance },
        ...checked,
      });
      const outcome = testSendOutcome(progress, ids);
      // Ids and the result only: never the recipient or the text.
      request.log.info({ correlation_id: ids.commandId, message_id: ids.messageId, result: outcome.code ?? outcome.status }, 'dashboard test send answered');
      return reply.page('instances/instance-manage', await managePage(deps.pool, deps.box, request, instance, { testSend: { form: entered, outcome, refusal: null } }));
    },
  );
}
