import type { Runtime } from '@gw/runtime';
import { SecretBox } from '@gw/security';
import { createRetryPolicy, createSsrfGuard } from '@gw/webhooks';
import { signingSecretOpener } from './dispatch/signing-secrets.ts';
import { DeliveryWorker } from './dispatch/worker.ts';
import { enqueueGatewayEvents } from './enqueue/handler.ts';
import { endpointHealthMetrics } from './endpoint-metrics.ts';
import { webhookMetrics } from './metrics.ts';

/**
 * Customer webhooks: a stage turns gateway events into pending deliveries (Postgres), and a
 * worker posts due deliveries, signed, through the SSRF guard, with retries on a schedule.
 */
export async function startWebhooksService(runtime: Runtime): Promise<() => Promise<void>> {
  const settings = runtime.config.webhooks;
  const policy = createRetryPolicy({
    delaysMs: settings.retryDelaysMs,
    jitterRatio: settings.retryJitter,
    attemptTimeoutMs: settings.attemptTimeoutMs,
    disableAfterMs: settings.disableAfterMs,
  });
  const guard = createSsrfGuard({ allowCidrs: settings.allowCidrs, httpsOnly: settings.httpsOnly });
  const box = SecretBox.fromConfig(runtime.config.secretKey);
  const worker = new DeliveryWorker({
    pool: runtime.pool,
    guard,
    policy,
    logger: runtime.logger,
    openSecret: signingSecretOpener(box),
    concurrency: settings.concurrency,
    endpointConcurrency: settings.endpointConcurrency,
    pollMs: settings.pollMs,
    leaseMs: settings.leaseMs,
    onAttempt: webhookMetrics(runtime.metrics.registry),
  });
  endpointHealthMetrics(runtime.metrics.registry, runtime.pool, runtime.logger);
  worker.start();
  await runtime.runStage({ name: 'webhook-enqueue', topic: 'gatewayEvents', accepts: ['GatewayEventEmitted'], handle: enqueueGatewayEvents(runtime, () => worker.wake()) });
  return async () => {
    await worker.stop();
    await guard.close();
  };
}
