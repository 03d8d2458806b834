import { Registry, collectDefaultMetrics, Histogram, Gauge, Counter } from 'prom-client';

/** One registry per service process, so tests that run several services in one process do not collide. */
export interface ServiceMetrics {
  registry: Registry;
  httpDuration: Histogram<'method' | 'route' | 'status_code'>;
  consumerLag: Gauge<'group' | 'topic' | 'partition'>;
  eventsProcessed: Counter<'group' | 'topic' | 'outcome'>;
  /** Records a stage gave up on and moved to the dead-letter topic. */
  deadLetters: Counter<'group' | 'topic'>;
  /** Failed tries of a stage: transient (infrastructure away, retried) or record (counted towards dead-lettering). */
  stageFailures: Counter<'group' | 'kind'>;
  /** Calls an instance manager refused with 503 LICENSE_REQUIRED (Evolution 2.4 not activated), by operation (route template; never an instance name). */
  managerLicenseRequired: Counter<'operation'>;
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
    deadLetters: new Counter({
      name: 'gateway_dead_letters_total',
      help: 'Records a consumer stage gave up on after its tries and moved to the dead-letter topic',
      labelNames: ['group', 'topic'],
      registers: [registry],
    }),
    stageFailures: new Counter({
      name: 'gateway_stage_failures_total',
      help: 'Failed tries of a consumer stage: transient (retried until the infrastructure is back) or record (counted towards dead-lettering)',
      labelNames: ['group', 'kind'],
      registers: [registry],
    }),
    managerLicenseRequired: new Counter({
      name: 'gateway_manager_license_required_total',
      help: 'Calls an instance manager refused because it is not activated (Evolution 2.4: HTTP 503 LICENSE_REQUIRED), by operation',
      labelNames: ['operation'],
      registers: [registry],
    }),
  };
}
