import { createPool } from '@gw/db';
import { KafkaInspector } from '@gw/kafka';
import { createRuntime, onShutdown } from '@gw/runtime';
import { buildApp } from './app.ts';
import { ReplyRouter } from '@gw/send';
import { SecretBox } from '@gw/security';
import { createMailer } from '@gw/mail';
import { dashboardAppends, dashboardWebhookDeps, messagingRules } from '@gw/dashboard';

const runtime = await createRuntime('api');
const { config, logger } = runtime;
const replies = new ReplyRouter(runtime.kafka, runtime.codec, runtime.topics, runtime.pool, logger);
runtime.consumers.push(await replies.start());

const box = SecretBox.fromConfig(config.secretKey);
// The dashboard's policy-log export and "verify my log" hold a snapshot open while they run: a
// small pool of their own, so downloads never take the connections the send path needs.
const compliancePool = await createPool(config.databaseUrl, { maxConnections: 3, ...config.database });
// Notices and links by mail (SMTP_URL; locally the maildev catcher `make run` starts).
const mailer = createMailer({ smtpUrl: config.mail.smtpUrl, from: config.mail.from, logger, registry: runtime.metrics.registry });
const app = await buildApp({
  logger,
  metrics: runtime.metrics,
  readiness: { check: () => runtime.consumers.filter((c) => !c.isReady()).map((c) => `consumer ${c.groupId}`) },
  publicBaseUrl: config.api.publicBaseUrl,
  bodyLimitBytes: config.api.bodyLimitBytes,
  requestTimeoutMs: config.api.requestTimeoutMs,
  trustedProxies: config.api.trustedProxies,
  metricsToken: config.api.metricsToken,
  metricsTokenRequired: config.api.metricsTokenRequired,
  instanceEventBodyLimitBytes: config.api.instanceEventBodyLimitBytes,
  instanceEvents: {
    rate: { perSecond: config.api.instanceEventRatePerSecond, burst: config.api.instanceEventBurst },
    pathTokens: config.api.instanceEventPathTokens,
  },
  idleTimeoutMs: config.api.sendDeadlineMs + 15_000,
  send: { pool: runtime.pool, kafka: runtime.kafka, codec: runtime.codec, replies, deadlineMs: config.api.sendDeadlineMs, reappendAfterMs: config.api.reappendAfterMs },
  pbx: {
    pool: runtime.pool,
    kafka: runtime.kafka,
    codec: runtime.codec,
    replies,
    box,
    deadlineMs: config.api.sendDeadlineMs,
    replayWindowSeconds: config.api.pbxReplayWindowSeconds,
    recentReadMs: config.api.pbxRecentReadMs,
    reappendAfterMs: config.api.reappendAfterMs,
  },
  dashboard: {
    pool: runtime.pool,
    box,
    settings: config.dashboard,
    mailer,
    appends: dashboardAppends(runtime.kafka, runtime.codec),
    // Instances created in the dashboard are created on this manager (docs/dashboard.md).
    instanceManager: { url: config.manager.url, apiKey: config.manager.globalApiKey },
    // The webhook tab checks destinations as the webhooks service does, and recovers from gateway-events.
    webhooks: dashboardWebhookDeps(config),
    // The public pages say what the policy service enforces: the same policy (createPolicy) and keywords.
    messaging: messagingRules(config),
    // The inbound log's retention, as the instance-events service purges it.
    inboundRetentionDays: config.instanceEvents.inboundRetentionDays,
    // The policy log's export and verification: the checks gatewayctl runs, for one customer.
    compliance: { pool: compliancePool, kafka: new KafkaInspector(config.kafkaBrokers, config.topicPrefix), codec: runtime.codec, topics: runtime.topics },
  },
});
await app.listen({ host: config.api.host, port: config.api.port });
logger.info({ url: config.api.publicBaseUrl }, 'api listening');

onShutdown(logger, async () => {
  // Stop accepting requests, let in-flight ones finish, then release Kafka and Postgres.
  await app.close();
  await mailer.close();
  await compliancePool.end().catch(() => undefined);
  await runtime.close();
});
