// The dashboard's dependencies for an app that serves no page that needs them: the OpenAPI
// generator and the unit tests of the app's own routes. Nothing here connects; a page that
// reached for Postgres would fail (and the tests that use this build never ask for one).
import { loadConfig } from '@gw/config';
import type { Pool } from '@gw/db';
import { EventCodec, Topics } from '@gw/events';
import { KafkaInspector } from '@gw/kafka';
import { createMailer } from '@gw/mail';
import { SecretBox } from '@gw/security';
import type { DashboardDeps } from './deps.ts';
import { dashboardWebhookDeps } from './webhook-deps.ts';
import { messagingRules } from './messaging-rules.ts';

export function unconnectedDashboard(): Omit<DashboardDeps, 'publicBaseUrl' | 'send'> {
  return {
    pool: {} as Pool,
    box: new SecretBox('unconnected-dashboard-key-material'),
    settings: loadConfig({}).dashboard,
    // Made, not connected: nodemailer connects only when a mail is sent (no page of this build sends one).
    mailer: createMailer({ smtpUrl: 'smtp://127.0.0.1:9', from: loadConfig({}).mail.from }),
    // The public pages need no connection: the default policy and keywords, as the services start with.
    messaging: messagingRules(loadConfig({})),
    appends: {
      facts: { append: () => Promise.reject(new Error('no Kafka in this build')) },
      audit: { record: () => Promise.reject(new Error('no Kafka in this build')) },
    },
    // Nowhere: no page of this build reaches an instance manager.
    instanceManager: { url: 'http://127.0.0.1:9', apiKey: 'unconnected' },
    // Connects only when a recover reads the topic, which no page of this build does.
    webhooks: dashboardWebhookDeps(loadConfig({})),
    inboundRetentionDays: loadConfig({}).instanceEvents.inboundRetentionDays,
    // Made, not connected: the inspector and the codec connect when the policy-log pages read (none here).
    compliance: complianceUnconnected(),
  };
}

function complianceUnconnected(): DashboardDeps['compliance'] {
  const config = loadConfig({});
  const topics = new Topics(config.topicPrefix, config.topicPartitions);
  return { pool: {} as Pool, kafka: new KafkaInspector(config.kafkaBrokers, config.topicPrefix), codec: new EventCodec(config.schemaRegistryUrl, topics), topics };
}
