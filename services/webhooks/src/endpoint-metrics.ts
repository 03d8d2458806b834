import { Gauge, type Registry } from 'prom-client';
import { sql, z, type Pool } from '@gw/db';
import { describeError, type Logger } from '@gw/observability';

/** What an endpoint's health says, as the dashboards count it: failing is active with a failure streak. */
export const ENDPOINT_STATES = ['healthy', 'failing', 'paused', 'disabled'] as const;

const HealthRow = z.object({ state: z.enum(ENDPOINT_STATES), endpoints: z.number(), oldest_failure_s: z.number() });

/**
 * The customer endpoints' health, read from webhook_endpoints (the one record of it, written with
 * every batch of attempts by any webhooks process) when Prometheus scrapes: how many endpoints are
 * in each state, and how long the longest-failing active one has been failing. Counts only: no
 * instance id or URL in a label. A scrape during a database outage serves the last values read.
 */
export function endpointHealthMetrics(registry: Registry, pool: Pool, logger: Logger): void {
  let reading: Promise<void> | null = null;
  // One query per scrape for both gauges (prom-client collects them concurrently).
  const refresh = () =>
    (reading ??= (async () => {
      try {
        const rows = await pool.any(sql.type(HealthRow)`
          SELECT state, count(*)::int AS endpoints,
                 COALESCE(max(EXTRACT(EPOCH FROM now() - failing_since)) FILTER (WHERE state = 'failing'), 0)::float8 AS oldest_failure_s
            FROM (SELECT failing_since,
                         CASE WHEN status <> 'active' THEN status WHEN failing_since IS NULL THEN 'healthy' ELSE 'failing' END AS state
                    FROM webhook_endpoints) e
           GROUP BY state`);
        const found = new Map(rows.map((r) => [r.state, r]));
        for (const state of ENDPOINT_STATES) endpoints.set({ state }, found.get(state)?.endpoints ?? 0);
        failingFor.set(found.get('failing')?.oldest_failure_s ?? 0);
      } catch (error) {
        logger.warn({ error: describeError(error) }, 'endpoint health not read for /metrics; serving the last values');
      }
    })().finally(() => (reading = null)));

  const endpoints = new Gauge({
    name: 'gateway_webhook_endpoints',
    help: 'Customer webhook endpoints by health: healthy, failing (active, every attempt since failing_since failed), paused, disabled',
    labelNames: ['state'],
    registers: [registry],
    collect: refresh,
  });
  const failingFor = new Gauge({
    name: 'gateway_webhook_endpoint_failing_seconds',
    help: 'How long the active endpoint failing the longest has been failing (0 when none is)',
    registers: [registry],
    collect: refresh,
  });
}
