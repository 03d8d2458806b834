// The customer dashboard (docs/dashboard.md): pages rendered on the server, on the API's origin,
// in their own fastify scope with one plugin per concern: form bodies, cookies, sessions, CSRF,
// sign-in rate limits and the page error handler. The JSON API around it keeps its contract.
import cookie from '@fastify/cookie';
import formbody from '@fastify/formbody';
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance } from 'fastify';
import { planChange } from '@gw/accounts';
import { accountPageRoutes } from './accounts/account-routes.ts';
import { resetRoutes } from './accounts/reset-routes.ts';
import { accountRoutes } from './accounts/routes.ts';
import { verifyRoutes } from './accounts/verify-routes.ts';
import { apiKeyRoutes } from './api-keys/routes.ts';
import { webhookTabAnswer } from './instances/manage-page.ts';
import { instanceRoutes } from './instances/routes.ts';
import { memberRoutes } from './members/routes.ts';
import { mfaRoutes } from './mfa/routes.ts';
import { pbxDashboardRoutes } from './pbx/routes.ts';
import { inboundRoutes } from './inbound/routes.ts';
import { messageRoutes } from './messages/routes.ts';
import { policyLogRoutes } from './policy-log/routes.ts';
import { suppressionRoutes } from './suppressions/routes.ts';
import { usageRoutes } from './usage/routes.ts';
import { checkFormInput } from './forms.ts';
import { csrfPlugin } from './plugins/csrf.ts';
import { pageErrorHandler } from './plugins/page-errors.ts';
import { publicRoutes } from './public/routes.ts';
import { lockoutOf, type DashboardDeps } from './deps.ts';
import { permissionOf } from './sessions/guards.ts';
import { sessionsPlugin } from './sessions/plugin.ts';
import { webhookRoutes } from './webhooks/routes.ts';

export async function dashboardPlugin(app: FastifyInstance, deps: DashboardDeps): Promise<void> {
  const secureCookies = deps.settings.secureCookies;
  // Checked at start: an unknown DASHBOARD_SIGN_UP_PLAN stops the API with the plans it may name.
  if (deps.settings.signUpPlan !== 'none') planChange('check', deps.settings.signUpPlan, { by: 'start', reason: 'check' });
  await app.register(formbody, { bodyLimit: 64 * 1024 });
  await app.register(cookie);
  await app.register(sessionsPlugin, { pool: deps.pool, secureCookies, lockout: lockoutOf(deps.settings), timeouts: { idleMs: deps.settings.sessionIdleMs, absoluteMs: deps.settings.sessionAbsoluteMs } });
  await app.register(csrfPlugin, { hmacKey: deps.box.deriveKey('dashboard csrf tokens'), secureCookies });
  await app.register(rateLimit, { global: false });
  app.setErrorHandler(pageErrorHandler(app));
  // Every form field and query value, once, through the API's text rule (forms.ts).
  app.addHook('preValidation', checkFormInput);
  // Pages and forms are not the JSON API: none of them is in openapi.json.
  app.addHook('onRoute', (route) => {
    route.schema = { ...route.schema, hide: true };
    for (const method of [route.method].flat()) if (method !== 'HEAD') deps.routes?.push({ method, url: route.url, permission: permissionOf(route.preHandler) });
  });

  // Every slice takes the dashboard's one typed deps and reads what it needs of them. The webhook
  // tab's answers are the instances slice's manage page, handed over here: no slice renders
  // another's template.
  const webhooks = (scope: FastifyInstance) => webhookRoutes(scope, deps, webhookTabAnswer(deps.pool, deps.box));
  for (const slice of [accountRoutes, verifyRoutes, resetRoutes, accountPageRoutes, memberRoutes, mfaRoutes, instanceRoutes, webhooks, apiKeyRoutes, pbxDashboardRoutes]) await app.register(slice, deps);
  // The operations and compliance views.
  for (const slice of [suppressionRoutes, inboundRoutes, messageRoutes, policyLogRoutes, usageRoutes]) await app.register(slice, deps);
  await app.register(publicRoutes, deps);
  // GET /: the smoke answer for tools (JSON), the landing page for a browser.
  app.get('/', { schema: { hide: true } }, async (request, reply) => {
    if (!wantsHtml(request.headers.accept)) return { service: 'chat-gateway', status: 'ok', contract: '/openapi.json' };
    return reply.page('views/landing', { title: 'Guarded messaging' });
  });
}

/** A browser asks for text/html first; curl and health checkers send no Accept, or *\/*. */
export const wantsHtml = (accept: string | undefined) => typeof accept === 'string' && /(^|,)\s*text\/html/i.test(accept);
