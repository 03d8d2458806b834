// @gw/dashboard: the customer dashboard (docs/dashboard.md), a fastify plugin the API process
// mounts on its own origin. What the API needs to mount it, and nothing of its slices.
export { dashboardPlugin, wantsHtml } from './plugin.ts';
// The routes the plugin registered, with their permissions (its `routes` option collects them).
export type { GuardedRoute } from './sessions/guards.ts';
export type { DashboardDeps } from './deps.ts';
export { dashboardAppends, type DashboardAppends } from './appends.ts';
export { dashboardWebhookDeps, type DashboardWebhookDeps } from './webhook-deps.ts';
export { messagingRules, type MessagingRules } from './messaging-rules.ts';
export { securityHeadersPlugin } from './plugins/security-headers.ts';
export { viewsPlugin } from './plugins/views.ts';
export { unconnectedDashboard } from './unconnected.ts';
