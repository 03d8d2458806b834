import { Counter, Histogram, type Registry } from 'prom-client';
import type { AttemptRecord } from './dispatch/attempt.ts';

/** What an SRE watches on the webhook sender: attempts by outcome and how long receivers take. */
export function webhookMetrics(registry: Registry) {
  const attempts = new Counter({
    name: 'gateway_webhook_attempts_total',
    help: 'Webhook delivery attempts by result (delivered, or the failure reason)',
    labelNames: ['result'],
    registers: [registry],
  });
  const latency = new Histogram({
    name: 'gateway_webhook_attempt_duration_seconds',
    help: 'Time from the start of an attempt to the response head (or failure)',
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 15],
    registers: [registry],
  });
  return (record: AttemptRecord) => {
    const c = record.classification;
    attempts.inc({ result: c.outcome === 'success' ? 'delivered' : c.reason });
    latency.observe(record.result.latencyMs / 1000);
  };
}
