// An instance's webhook, from the webhook tab of its manage page: configure the destination and
// events, pause and resume, rotate the signing secret (a code again), resend a delivery, and
// recover what the webhook missed since a time. The operations are @gw/accounts' (gatewayctl runs
// the same), scoped to the signed-in member's customer. Each answers with a redirect back to the
// tab, except where a secret is shown this once (the page itself, not cached) or a form is refused.
import { checkWebhookChoice, pauseWebhook, recoverDeliveries, resendDelivery, resumeWebhook, rotateWebhookSecret, saveWebhook, showWebhook, WebhookError, type InstanceSummary } from '@gw/accounts';
import { standardWebhooksSecret, WEBHOOK_EVENT_GROUPS } from '@gw/webhooks';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { recordChange } from '../appends.ts';
import { NO_SUCH_INSTANCE, ownInstance } from '../own-instance.ts';
import { requireStepUp, STEP_UP_REFUSED, stepUpPasses, stepUpRateLimit } from '../mfa/step-up.ts';
import { member, PageError, requirePermission } from '../sessions/guards.ts';
import { explainAction, explainConfigure } from './refusal-words.ts';
import { RECOVER_MAX_DAYS, type WebhookTabAnswer, type WebhookTabOptions } from './tab-data.ts';
import { form, text } from '../forms.ts';
import type { DashboardDeps } from '../deps.ts';

// A checkbox ticked once arrives as a string, several times as an array (no type coercion here).

/** Recovers a member may start per minute. */
const RECOVERS_PER_MINUTE = 10;

/** A datetime-local value (read as UTC), to the minute or second. */
const LOCAL_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?$/;

interface Params {
  id: string;
}

/**
 * The webhook tab's routes. `tab` answers a POST with the manage page on this tab (a refused form,
 * or a secret shown once): that page is the instances slice's, so it is handed in (plugin.ts).
 */
export async function webhookRoutes(app: FastifyInstance, deps: DashboardDeps, tab: WebhookTabAnswer): Promise<void> {
  const tabUrl = (id: string, done: string) => `/instances/${encodeURIComponent(id)}/manage?tab=webhook&done=${done}`;

  /** A refusal that is not a form's to show: the instance or delivery is not the member's, or the deployment is misconfigured. */
  const unexpected = (request: FastifyRequest, error: unknown): never => {
    if (error instanceof WebhookError && error.refusal === 'no_delivery') {
      throw new PageError(404, 'No such delivery', "This instance's webhook has no delivery with this id.", { href: `/instances/${encodeURIComponent((request.params as Params).id)}/manage?tab=webhook`, label: 'The webhook' });
    }
    if (error instanceof WebhookError && error.refusal === 'no_instance') throw new PageError(404, NO_SUCH_INSTANCE.title, NO_SUCH_INSTANCE.message, { href: '/instances', label: 'Your instances' });
    if (error instanceof WebhookError && error.refusal === 'rules_invalid') request.log.error('WEBHOOK_ALLOW_CIDRS is not valid: webhook destinations cannot be checked');
    throw error;
  };

  /** Runs an action; a refusal the tab words goes back to the tab, beside its form. */
  const act = async <T>(request: FastifyRequest, reply: FastifyReply, instance: InstanceSummary, formName: NonNullable<WebhookTabOptions['error']>['form'], work: () => Promise<T>, extra: WebhookTabOptions = {}): Promise<{ done: T } | { answered: FastifyReply }> => {
    try {
      return { done: await work() };
    } catch (error) {
      const message = error instanceof WebhookError ? explainAction(error) : null;
      if (message === null) return unexpected(request, error);
      const status = (error as WebhookError).code === 'not_found' || (error as WebhookError).code === 'invalid' ? 400 : 409;
      return { answered: await tab(request, reply, status, instance, { ...extra, error: { form: formName, message } }) };
    }
  };

  app.post<{ Params: Params; Body: { url?: string; events?: string | string[]; preset?: string; code?: string } }>(
    '/instances/:id/webhook',
    { preHandler: requirePermission('webhooks.manage'), schema: form({ url: text(4096), events: { anyOf: [text(64), { type: 'array', maxItems: 64, items: text(64) }] }, preset: text(20), code: text(40) }), attachValidation: true, config: stepUpRateLimit(deps.settings.signInPerMinute) },
    async (request, reply) => {
      const instance = await ownInstance(deps.pool, request, request.params.id);
      const url = (request.body?.url ?? '').trim();
      const events = request.body?.preset === 'recommended' ? [...WEBHOOK_EVENT_GROUPS.recommended] : [request.body?.events ?? []].flat();
      const refuse = (message: string, detail: string | null = null, status = 400) => tab(request, reply, status, instance, { form: { url, events }, error: { form: 'configure', message, detail } });
      if (request.validationError) return refuse('The form was not complete. Give the address and choose events from the list.');
      const scope = { customerId: member(request).customer_id };
      // The address and events are checked first: a refused address does not use up the member's
      // code (each code works once), and the form says why, as before.
      let choice: Awaited<ReturnType<typeof checkWebhookChoice>>;
      try {
        choice = await checkWebhookChoice(url, events, deps.webhooks.rules);
      } catch (error) {
        const explained = error instanceof WebhookError ? explainConfigure(error, deps.webhooks.rules) : null;
        if (explained) return refuse(explained.message, explained.detail);
        return unexpected(request, error);
      }
      // A new destination (or a first one) decides where the instance's events go: a code again
      // (issue 25), compared with the address as it is saved (normalised). A wrong or missing code
      // re-renders the form with a 400, as every step-up form does. The save holds to the address
      // this decision read: moved meanwhile (another member), it is refused with a 409, so no
      // destination changes on a decision made about another.
      const current = (await showWebhook(deps.pool, instance.id, scope).catch(() => null))?.destination_url ?? null;
      if (current !== choice.url && !(await stepUpPasses(deps.pool, deps.box, member(request), request.body?.code))) return refuse(STEP_UP_REFUSED);
      let saved: Awaited<ReturnType<typeof saveWebhook>>;
      try {
        saved = await saveWebhook(deps.pool, deps.box, instance.id, choice, scope, { expectedUrl: current });
      } catch (error) {
        const explained = error instanceof WebhookError ? explainConfigure(error, deps.webhooks.rules) : null;
        if (explained) return refuse(explained.message, explained.detail, (error as WebhookError).code === 'conflict' ? 409 : 400);
        return unexpected(request, error);
      }
      const created = saved.signing_secret !== undefined;
      await recordChange(deps.appends.audit, request, {
        action: 'webhook.configured',
        subjectId: instance.id,
        instanceId: instance.id,
        details: { destination_host: new URL(saved.destination_url).host, events: saved.events, status: saved.status, created },
      });
      if (!created) return reply.redirect(tabUrl(instance.id, 'webhook_saved'), 303);
      return tab(request, reply, 200, instance, { done: 'webhook_saved', secret: { value: saved.signing_secret!, standard: standardWebhooksSecret(saved.signing_secret!), rotated: false } });
    },
  );

  app.post<{ Params: Params; Body: { code?: string } }>(
    '/instances/:id/webhook/rotate-secret',
    {
      preHandler: requirePermission('webhooks.manage'),
      schema: form({ code: text(40) }),
      attachValidation: true,
      // A code is 6 digits: guessing one is bounded per member, not only by the code's 30 seconds.
      config: { rateLimit: { max: deps.settings.signInPerMinute, timeWindow: 60_000, keyGenerator: (request: FastifyRequest) => request.account?.user_id ?? request.ip } },
    },
    async (request, reply) => {
      const instance = await ownInstance(deps.pool, request, request.params.id);
      await requireStepUp(deps.pool, deps.box, member(request), request.body?.code);
      const outcome = await act(request, reply, instance, 'rotate', () => rotateWebhookSecret(deps.pool, deps.box, instance.id, { customerId: member(request).customer_id }, { overlapMs: deps.webhooks.secretOverlapMs }));
      if ('answered' in outcome) return outcome.answered;
      await recordChange(deps.appends.audit, request, { action: 'webhook.secret_rotated', subjectId: instance.id, instanceId: instance.id });
      const rotated = outcome.done;
      return tab(request, reply, 200, instance, { secret: { value: rotated.signing_secret, standard: standardWebhooksSecret(rotated.signing_secret), rotated: true, previousUntil: rotated.previous_secret_expires_at } });
    },
  );

  for (const [path, operation, action, done] of [
    ['pause', pauseWebhook, 'webhook.paused', 'webhook_paused'],
    ['resume', resumeWebhook, 'webhook.resumed', 'webhook_resumed'],
  ] as const) {
    app.post<{ Params: Params }>(`/instances/:id/webhook/${path}`, { preHandler: requirePermission('webhooks.manage'), schema: form({}) }, async (request, reply) => {
      const instance = await ownInstance(deps.pool, request, request.params.id);
      const outcome = await act(request, reply, instance, 'status', () => operation(deps.pool, instance.id, { customerId: member(request).customer_id }));
      if ('answered' in outcome) return outcome.answered;
      await recordChange(deps.appends.audit, request, { action, subjectId: instance.id, instanceId: instance.id, details: { previous_status: outcome.done.previous_status } });
      return reply.redirect(tabUrl(instance.id, done), 303);
    });
  }

  app.post<{ Params: Params & { deliveryId: string } }>(
    '/instances/:id/webhook/deliveries/:deliveryId/resend',
    { preHandler: requirePermission('webhooks.manage'), schema: form({}) },
    async (request, reply) => {
      const instance = await ownInstance(deps.pool, request, request.params.id);
      const scope = { customerId: member(request).customer_id, instanceId: instance.id };
      const outcome = await act(request, reply, instance, 'deliveries', () => resendDelivery(deps.pool, request.params.deliveryId, scope));
      if ('answered' in outcome) return outcome.answered;
      await recordChange(deps.appends.audit, request, { action: 'webhook.delivery_resent', subjectId: outcome.done.delivery_id, instanceId: instance.id, details: { event: outcome.done.event } });
      return reply.redirect(tabUrl(instance.id, 'webhook_resent'), 303);
    },
  );

  app.post<{ Params: Params; Body: { since?: string } }>(
    '/instances/:id/webhook/recover',
    {
      preHandler: requirePermission('webhooks.manage'),
      schema: form({ since: text(40) }),
      attachValidation: true,
      // Each recover reads the shared topic from its time on: bounded per member.
      config: { rateLimit: { max: RECOVERS_PER_MINUTE, timeWindow: 60_000, keyGenerator: (request: FastifyRequest) => request.account?.user_id ?? request.ip } },
    },
    async (request, reply) => {
      const instance = await ownInstance(deps.pool, request, request.params.id);
      const raw = (request.body?.since ?? '').trim();
      const refuse = (message: string) => tab(request, reply, 400, instance, { since: raw, error: { form: 'recover', message } });
      // A datetime-local input has no zone; the form says it is UTC.
      const since = LOCAL_TIME.test(raw) ? new Date(`${raw}Z`) : new Date(NaN);
      if (request.validationError || Number.isNaN(since.getTime())) return refuse('Give the date and time (UTC) to recover from.');
      if (since.getTime() > Date.now() + 60_000) return refuse('That time is in the future: choose a time in the past, in UTC.');
      if (since.getTime() < Date.now() - RECOVER_MAX_DAYS * 86_400_000) return refuse(`Recover reaches back ${RECOVER_MAX_DAYS} days at most: choose a later time.`);
      const outcome = await act(request, reply, instance, 'recover', () => recoverDeliveries({ pool: deps.pool, events: deps.webhooks.events }, { instanceId: instance.id, since, customerId: member(request).customer_id }), { since: raw });
      if ('answered' in outcome) return outcome.answered;
      const report = outcome.done;
      await recordChange(deps.appends.audit, request, { action: 'webhook.recovered', subjectId: instance.id, instanceId: instance.id, details: { since: report.since, queued: report.queued, requeued: report.requeued } });
      return reply.redirect(tabUrl(instance.id, 'webhook_recovered'), 303);
    },
  );
}
