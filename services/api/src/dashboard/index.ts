// The customer dashboard (docs/dashboard.md): pages rendered on the server, on the API's origin,
// in their own fastify scope with one plugin per concern: form bodies, cookies, sessions, CSRF,
// sign-in rate limits and the page error handler. The JSON API around it keeps its contract.
import cookie from '@fastify/cookie';
import formbody from '@fastify/formbody';
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance } from 'fastify';
import { planChange } from '@gw/accounts';
import type { ComplianceDeps } from '@gw/compliance';
import type { GatewayConfig } from '@gw/config';
import type { Pool } from '@gw/db';
import type { SecretBox } from '@gw/security';
import type { Mailer } from '@gw/mail';
import { accountPageRoutes } from './accounts/account-routes.ts';
import { resetRoutes } from './accounts/reset-routes.ts';
import { accountRoutes } from './accounts/routes.ts';
import { verifyRoutes } from './accounts/verify-routes.ts';
import { apiKeyRoutes } from './api-keys/routes.ts';
import type { DashboardAppends } from './appends.ts';
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
import type { MessagingRules } from './public/messaging-rules.ts';
import { publicRoutes } from './public/routes.ts';
import { permissionOf, type GuardedRoute } from './sessions/guards.ts';
import { sessionsPlugin } from './sessions/plugin.ts';
import type { DashboardWebhookDeps } from './webhooks/deps.ts';
import { webhookRoutes } from './webhooks/routes.ts';
import type { SendDeps as SendMessageDeps } from '@gw/send';

export interface DashboardDeps {
  pool: Pool;
  box: SecretBox;
  settings: GatewayConfig['dashboard'];
  /** Verification and reset links, security notices and invitations (libs/mail; SMTP_URL). */
  mailer: Mailer;
  /** Policy facts and the audit trail, appended through the API's producer. */
  appends: DashboardAppends;
  /** The gateway's public address, for links shown to customers (invitations, webhook URLs) and the instance webhooks set on the manager. */
  publicBaseUrl: string;
  /** The Evolution API v2 compatible manager that instances created here are created on (its global apikey). */
  instanceManager: { url: string; apiKey: string };
  /** What POST /api/send-message uses: test sends go through the same guarded path. */
  send: SendMessageDeps;
  /** The policy the engine decides with and the opt-out keywords: the public pages are built from them. */
  messaging: MessagingRules;
  /** The webhooks service's destination rules and the gateway-events topic, for the instance pages' webhook tab. */
  webhooks: DashboardWebhookDeps;
  /** Days the inbound log keeps a received message (config.instanceEvents.inboundRetentionDays), shown on /inbound-logs and /suppressed-recipients. */
  inboundRetentionDays: number;
  /**
   * The policy log's export and "verify my log" (@gw/compliance, the checks gatewayctl runs): a
   * Postgres pool of their own (an export or a verification holds one snapshot open while it runs,
   * which must never starve the send path), the Kafka inspector and the codec to read the
   * decisions and customer-events topics. No `connection`: the replay runs on the API's thread.
   */
  compliance: ComplianceDeps;
  /** When given, every dashboard route is listed here with its permission (the role matrix test walks them). */
  routes?: GuardedRoute[];
}

export async function dashboardPlugin(app: FastifyInstance, deps: DashboardDeps): Promise<void> {
  const secureCookies = deps.settings.secureCookies;
  // Checked at start: an unknown DASHBOARD_SIGN_UP_PLAN stops the API with the plans it may name.
  if (deps.settings.signUpPlan !== 'none') planChange('check', deps.settings.signUpPlan, { by: 'start', reason: 'check' });
  await app.register(formbody, { bodyLimit: 64 * 1024 });
  await app.register(cookie);
  await app.register(sessionsPlugin, { pool: deps.pool, secureCookies, lockout: { after: deps.settings.lockoutAfter, ms: deps.settings.lockoutMs }, timeouts: { idleMs: deps.settings.sessionIdleMs, absoluteMs: deps.settings.sessionAbsoluteMs } });
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

  const lockout = { after: deps.settings.lockoutAfter, ms: deps.settings.lockoutMs };
  const perMinute = deps.settings.signInPerMinute;
  const mail = { mailer: deps.mailer, publicBaseUrl: deps.publicBaseUrl };
  await app.register(accountRoutes, { pool: deps.pool, box: deps.box, lockout, signInPerMinute: perMinute, secureCookies, ...mail, emailVerifyMs: deps.settings.emailVerifyMs });
  await app.register(verifyRoutes, { pool: deps.pool, appends: deps.appends, ...mail, emailVerifyMs: deps.settings.emailVerifyMs, signUpPlan: deps.settings.signUpPlan, secureCookies, perMinute });
  await app.register(resetRoutes, { pool: deps.pool, box: deps.box, appends: deps.appends, ...mail, passwordResetMs: deps.settings.passwordResetMs, signUpPlan: deps.settings.signUpPlan, lockout, secureCookies, perMinute });
  await app.register(accountPageRoutes, { pool: deps.pool, ...mail, lockout, secureCookies, perMinute });
  await app.register(memberRoutes, { pool: deps.pool, box: deps.box, appends: deps.appends, ...mail, emailVerifyMs: deps.settings.emailVerifyMs, secureCookies, stepUpPerMinute: perMinute });
  await app.register(mfaRoutes, { pool: deps.pool, box: deps.box, audit: deps.appends.audit, mailer: deps.mailer, secureCookies, stepUpPerMinute: perMinute });
  await app.register(instanceRoutes, { pool: deps.pool, box: deps.box, audit: deps.appends.audit, instanceManager: deps.instanceManager, publicBaseUrl: deps.publicBaseUrl, send: deps.send, pairingCloseWaitMs: deps.settings.pairingCloseWaitMs });
  await app.register(webhookRoutes, { pool: deps.pool, box: deps.box, audit: deps.appends.audit, stepUpPerMinute: deps.settings.signInPerMinute, ...deps.webhooks });
  await app.register(apiKeyRoutes, { pool: deps.pool, box: deps.box, audit: deps.appends.audit, mailer: deps.mailer, stepUpPerMinute: perMinute });
  await app.register(pbxDashboardRoutes, { pool: deps.pool, box: deps.box, audit: deps.appends.audit, publicBaseUrl: deps.publicBaseUrl, stepUpPerMinute: deps.settings.signInPerMinute });
  // The operations and compliance views (each takes what it needs from the dashboard's deps).
  await app.register(suppressionRoutes, deps);
  await app.register(inboundRoutes, deps);
  await app.register(messageRoutes, deps);
  await app.register(policyLogRoutes, deps);
  await app.register(usageRoutes, deps);
  await app.register(publicRoutes, { messaging: deps.messaging });
  // GET /: the smoke answer for tools (JSON), the landing page for a browser.
  app.get('/', { schema: { hide: true } }, async (request, reply) => {
    if (!wantsHtml(request.headers.accept)) return { service: 'chat-gateway', status: 'ok', contract: '/openapi.json' };
    return reply.page('landing', { title: 'Guarded messaging' });
  });
}

/** A browser asks for text/html first; curl and health checkers send no Accept, or *\/*. */
export const wantsHtml = (accept: string | undefined) => typeof accept === 'string' && /(^|,)\s*text\/html/i.test(accept);
