// The one set of dependencies every slice of the dashboard takes (each reads what it needs), typed
// once here, below every slice: a slice imports this type, never the plugin that mounts it.
import type { ComplianceDeps } from '@gw/compliance';
import type { GatewayConfig } from '@gw/config';
import type { Pool } from '@gw/db';
import type { Mailer } from '@gw/mail';
import type { SecretBox } from '@gw/security';
import type { SendDeps as SendMessageDeps } from '@gw/send';
import type { DashboardAppends } from './appends.ts';
import type { MessagingRules } from './messaging-rules.ts';
import type { GuardedRoute } from './sessions/guards.ts';
import type { DashboardWebhookDeps } from './webhook-deps.ts';

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

/** The sign-in lockout (DASHBOARD_LOCKOUT_*): failed attempts before it, and how long it lasts. */
export const lockoutOf = (settings: DashboardDeps['settings']) => ({ after: settings.lockoutAfter, ms: settings.lockoutMs });
