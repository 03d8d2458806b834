import { Registry, collectDefaultMetrics, Histogram, Gauge, Counter } from 'prom-client';

/** One registry per service process, so tests that run several services in one process do not collide. */
export interface ServiceMetrics {
  registry: Registry;
  httpDuration: Histogram<'method' | 'route' | 'status_code'>;
  consumerLag: Gauge<'group' | 'topic' | 'partition'>;
  eventsProcessed: Counter<'group' | 'topic' | 'outcome'>;
}

export function createMetrics(service: string, withDefaults = true): ServiceMetrics {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  if (withDefaults) collectDefaultMetrics({ register: registry });
  return {
    registry,
    httpDuration: new Histogram({
      name: 'gateway_http_request_duration_seconds',
      help: 'HTTP request latency by route and status',
      labelNames: ['method', 'route', 'status_code'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.2, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
    consumerLag: new Gauge({
      name: 'gateway_consumer_lag',
      help: 'Records between the consumer position and the partition high watermark',
      labelNames: ['group', 'topic', 'partition'],
      registers: [registry],
    }),
    eventsProcessed: new Counter({
      name: 'gateway_events_processed_total',
      help: 'Events handled by a consumer group, by outcome',
      labelNames: ['group', 'topic', 'outcome'],
      registers: [registry],
    }),
  };
}
