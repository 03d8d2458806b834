// What the webhook tab needs of the deployment: the destination rules the webhooks service
// applies (so the dashboard refuses what the service would), and the gateway-events topic that
// "Recover since…" reads.
import { kafkaGatewayEventLog, type DestinationRules, type GatewayEventLog } from '@gw/accounts';
import type { GatewayConfig } from '@gw/config';
import { EventCodec, Topics } from '@gw/events';
import { KafkaInspector } from '@gw/kafka';

export interface DashboardWebhookDeps {
  /** WEBHOOK_ALLOW_CIDRS and WEBHOOK_ALLOW_HTTP, as the webhooks service and gatewayctl read them. */
  rules: DestinationRules;
  /** WEBHOOK_SECRET_OVERLAP_MS: how long a rotated-out secret keeps signing. */
  secretOverlapMs: number;
  /** The gateway-events topic (connects only when read). */
  events: GatewayEventLog;
}

export function dashboardWebhookDeps(config: GatewayConfig): DashboardWebhookDeps {
  const topics = new Topics(config.topicPrefix, config.topicPartitions);
  return {
    rules: { allowCidrs: config.webhooks.allowCidrs, httpsOnly: config.webhooks.httpsOnly },
    secretOverlapMs: config.webhooks.secretOverlapMs,
    // Decoding needs no registration: schemas are fetched by the id in each record.
    events: kafkaGatewayEventLog(new KafkaInspector(config.kafkaBrokers, config.topicPrefix), new EventCodec(config.schemaRegistryUrl, topics), topics.name('gatewayEvents')),
  };
}
