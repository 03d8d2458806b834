// PBX integrations: the customer's integrations (webhook URL, signing, events, templates with a
// preview of what each sends), creating one and rotating its secret (each secret shown in that
// one answer only; rotating asks for a code again) and editing its templates. The PBX's own
// endpoint, POST /integrations/pbx/webhook/:id, is services/api/src/pbx/. Every integration is
// found within the signed-in member's customer (@gw/accounts' customer scope): another
// customer's id answers 404 like an unknown one.
import { AccountError, createPbx, listInstances, listPbxIntegrations, pbxModuleEnabled, rotatePbxSecret, setPbxTemplate, type PbxIntegrationSummary } from '@gw/accounts';
import { DEFAULT_PBX_TEMPLATES, TEMPLATE_EVENTS, templateText, textProblem, type TemplateValues } from '@gw/contract';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { recordChange } from '../appends.ts';
import { STEP_UP_REFUSED, stepUpPasses, stepUpRateLimit } from '../mfa/step-up.ts';
import { can } from '../roles/permissions.ts';
import { member, PageError, requirePermission } from '../sessions/guards.ts';
import { form, text } from '../forms.ts';
import type { DashboardDeps } from '../deps.ts';
import type { PbxFormError, PbxPage } from './pages.ts';

/** What a template preview fills in, as a PBX event would. */
export const PREVIEW_VALUES: Required<TemplateValues> = { customer_phone: '+14155550123', agent_extension: '204', queue: 'Support', call_time: '14:05' };

export const EVENT_LABELS: Record<string, string> = {
  missed_call: 'Missed call',
  after_hours: 'Call after hours',
  voicemail: 'Voicemail left',
  queue_callback: 'Callback asked for in a queue',
};

export const TEMPLATE_MAX = 1000;
export const RATE_MIN = 1;
export const RATE_MAX = 6000;
const RATE_DEFAULT = 120;

const NO_SUCH_INTEGRATION = { title: 'No such PBX integration', message: 'Your organisation has no PBX integration with this id.' };

export async function pbxDashboardRoutes(app: FastifyInstance, deps: DashboardDeps): Promise<void> {
  const base = deps.publicBaseUrl.replace(/\/+$/, '');
  const webhookUrl = (id: number) => `${base}/integrations/pbx/webhook/${id}`;
  const stepUpLimit = stepUpRateLimit(deps.settings.signInPerMinute);

  const view = (integration: PbxIntegrationSummary, instanceNames: Map<string, string>) => ({
    ...integration,
    webhook_url: webhookUrl(integration.pbx_integration_id),
    instance_name: instanceNames.get(integration.instance_id) ?? null,
    events: TEMPLATE_EVENTS.map((event) => ({
      event,
      label: EVENT_LABELS[event] ?? event,
      enabled: integration.enabled_events.includes(event),
      template: integration.templates[event] ?? DEFAULT_PBX_TEMPLATES[event]!,
      // Rendered by the PBX route's own function, with sample values.
      preview: templateText(integration.templates, event, PREVIEW_VALUES),
    })),
  });

  const page = async (request: FastifyRequest, extra: { error?: PbxFormError; shown?: Record<string, unknown>; form?: Record<string, string> } = {}): Promise<PbxPage> => {
    const me = member(request);
    const [integrations, instances, moduleOn] = await Promise.all([listPbxIntegrations(deps.pool, me.customer_id), listInstances(deps.pool, me.customer_id), pbxModuleEnabled(deps.pool, me.customer_id)]);
    const names = new Map(instances.map((i) => [i.id, i.name]));
    const saved = (request.query as { saved?: string } | undefined)?.saved;
    return {
      title: 'PBX integrations',
      integrations: integrations.map((i) => view(i, names)),
      instances,
      moduleOn,
      canManage: can(me.role, 'pbx.manage'),
      previewValues: PREVIEW_VALUES,
      templateMax: TEMPLATE_MAX,
      rate: { min: RATE_MIN, max: RATE_MAX, default: RATE_DEFAULT },
      notice: saved ? `Template saved for integration ${saved}.` : null,
      error: extra.error ?? null,
      shown: extra.shown ?? null,
      form: extra.form ?? {},
    };
  };

  /** The id in the URL, of one of the member's customer's integrations; a 404 page otherwise. */
  const ownIntegration = async (request: FastifyRequest, rawId: string): Promise<PbxIntegrationSummary> => {
    const id = /^\d{1,9}$/.test(rawId) ? Number(rawId) : null;
    const found = id === null ? undefined : (await listPbxIntegrations(deps.pool, member(request).customer_id)).find((i) => i.pbx_integration_id === id);
    if (!found) throw new PageError(404, NO_SUCH_INTEGRATION.title, NO_SUCH_INTEGRATION.message, { href: '/integrations/pbx', label: 'Your PBX integrations' });
    return found;
  };

  /** The scoped account operations refuse another customer's integration as not found: the same 404. */
  const notFoundAs404 = (error: unknown): never => {
    if (error instanceof AccountError && error.code === 'not_found') throw new PageError(404, NO_SUCH_INTEGRATION.title, NO_SUCH_INTEGRATION.message, { href: '/integrations/pbx', label: 'Your PBX integrations' });
    throw error;
  };

  app.get('/integrations/pbx', { preHandler: requirePermission('dashboard.view') }, async (request, reply) => reply.page('pbx/pbx', await page(request)));

  app.post<{ Body: { instance_id?: string; hmac?: string; rate_per_minute?: string; code?: string } }>(
    '/integrations/pbx',
    { preHandler: requirePermission('pbx.manage'), schema: form({ instance_id: text(100), hmac: text(10), rate_per_minute: text(10), code: text(40) }), attachValidation: true, config: stepUpLimit },
    async (request, reply) => {
      const instanceId = (request.body?.instance_id ?? '').trim();
      const hmac = request.body?.hmac === 'on';
      const rawRate = (request.body?.rate_per_minute ?? '').trim();
      const rate = rawRate === '' ? RATE_DEFAULT : /^\d{1,5}$/.test(rawRate) ? Number(rawRate) : NaN;
      const formValues = { instance_id: instanceId, hmac: hmac ? 'on' : '', rate_per_minute: rawRate };
      const again = async (message: string) => reply.code(400).page('pbx/pbx', await page(request, { error: { where: 'create', message }, form: formValues }));
      if (request.validationError || instanceId === '') return again('Choose the instance the PBX sends its messages through.');
      if (!(rate >= RATE_MIN && rate <= RATE_MAX)) return again(`The rate limit is a whole number of requests per minute, from ${RATE_MIN} to ${RATE_MAX}.`);
      // A new integration holds a secret that sends in the customer's name: a code again.
      if (!(await stepUpPasses(deps.pool, deps.box, member(request), request.body?.code))) return again(STEP_UP_REFUSED);
      const customerId = member(request).customer_id;
      let created: Awaited<ReturnType<typeof createPbx>>;
      try {
        created = await createPbx(deps.pool, deps.box, { customerId, instanceId, hmac, ratePerMinute: rate, baseUrl: base });
      } catch (error) {
        if (error instanceof AccountError) return again('Choose one of your instances.');
        throw error;
      }
      const id = created.pbx_integration_id;
      await recordChange(deps.appends.audit, request, { action: 'pbx.created', subjectId: String(id), instanceId, details: { hmac, rate_per_minute: rate } });
      // The secrets are in this answer only; the list never shows them again.
      return reply.page('pbx/pbx', await page(request, { shown: { kind: 'created', id, webhook_url: webhookUrl(id), pbx_secret: created.pbx_secret, pbx_signing_secret: created.pbx_signing_secret ?? null } }));
    },
  );

  app.post<{ Params: { id: string }; Body: { hmac?: string; code?: string } }>(
    '/integrations/pbx/:id/rotate-secret',
    { preHandler: requirePermission('pbx.manage'), schema: form({ hmac: text(10), code: text(40) }), config: stepUpLimit },
    async (request, reply) => {
      const integration = await ownIntegration(request, request.params.id);
      const id = integration.pbx_integration_id;
      const hmac = request.body?.hmac === 'on';
      if (!(await stepUpPasses(deps.pool, deps.box, member(request), request.body?.code))) {
        return reply.code(400).page('pbx/pbx', await page(request, { error: { where: `rotate-${id}`, message: STEP_UP_REFUSED } }));
      }
      const rotated = await rotatePbxSecret(deps.pool, deps.box, id, hmac, { customerId: member(request).customer_id }).catch(notFoundAs404);
      await recordChange(deps.appends.audit, request, { action: 'pbx.secret_rotated', subjectId: String(id), instanceId: integration.instance_id, details: { hmac } });
      return reply.page('pbx/pbx', await page(request, { shown: { kind: 'rotated', id, webhook_url: webhookUrl(id), pbx_secret: rotated.pbx_secret, pbx_signing_secret: rotated.pbx_signing_secret ?? null } }));
    },
  );

  app.post<{ Params: { id: string }; Body: { event?: string; text?: string; enabled?: string } }>(
    '/integrations/pbx/:id/template',
    { preHandler: requirePermission('pbx.manage'), schema: form({ event: text(40), text: text(TEMPLATE_MAX * 4), enabled: text(10) }), attachValidation: true },
    async (request, reply) => {
      const integration = await ownIntegration(request, request.params.id);
      const id = integration.pbx_integration_id;
      const event = request.body?.event ?? '';
      const template = (request.body?.text ?? '').trim();
      const enabled = request.body?.enabled === 'on';
      const again = async (message: string) =>
        reply.code(400).page('pbx/pbx', await page(request, { error: { where: `template-${id}-${event}`, message }, form: { [`template-${id}-${event}`]: template } }));
      if (!(TEMPLATE_EVENTS as readonly string[]).includes(event)) {
        return reply.code(400).page('pbx/pbx', await page(request, { error: { where: 'page', message: `Templates exist for ${TEMPLATE_EVENTS.join(', ')}.` } }));
      }
      if (request.validationError || template === '') return again(`Write the message this event sends (at most ${TEMPLATE_MAX} characters).`);
      const problem = textProblem(template, TEMPLATE_MAX);
      if (problem) return again(`The template ${problem}.`);
      try {
        await setPbxTemplate(deps.pool, id, event, template, enabled, { customerId: member(request).customer_id });
      } catch (error) {
        if (error instanceof AccountError && error.code === 'invalid') return again(error.message);
        notFoundAs404(error);
      }
      await recordChange(deps.appends.audit, request, { action: 'pbx.template_changed', subjectId: String(id), instanceId: integration.instance_id, details: { event, enabled } });
      return reply.redirect(`/integrations/pbx?saved=${id}#pbx-${id}`, 303);
    },
  );
}
