import { describe, expect, it } from 'vitest';
import { dashboard, dashboardQueries } from './observe-files.ts';

// The Grafana dashboard's shape: importable anywhere (the data source is a variable), one panel
// per thing an SRE watches on the gateway, and queries the e2e test can run as Grafana would.
describe('deploy/observe/grafana/gateway.json', () => {
  const board = dashboard();
  const panels = board.panels.filter((p) => p.type !== 'row');

  it('is a current-schema dashboard whose every panel and query reads the templated Prometheus data source', () => {
    expect(board.schemaVersion).toBeGreaterThanOrEqual(39);
    expect(board.templating.list).toContainEqual(expect.objectContaining({ name: 'DS_PROMETHEUS', type: 'datasource', query: 'prometheus' }));
    expect(new Set(board.panels.map((p) => p.id)).size).toBe(board.panels.length);
    for (const panel of panels) {
      expect(panel.datasource, panel.title).toEqual({ type: 'prometheus', uid: '${DS_PROMETHEUS}' });
      expect(panel.targets?.length, panel.title).toBeGreaterThan(0);
      for (const target of panel.targets ?? []) expect(target.datasource, panel.title).toEqual({ type: 'prometheus', uid: '${DS_PROMETHEUS}' });
    }
  });

  it('has panels for sends and their outcomes, latency p50/p99, lag per group, decisions, dead letters, webhooks, breakers, the chain check and CPU/memory per service', () => {
    const queries = dashboardQueries();
    const panelOf = (pattern: RegExp) => queries.filter((q) => pattern.test(q.expr)).map((q) => q.panel);
    const wanted: Record<string, RegExp> = {
      'send rate by status': /gateway_http_request_duration_seconds_count\{[^}]*route="\/api\/send-message"[^}]*\}/,
      'send outcomes': /gateway_events_processed_total\{topic="send-decided"\}/,
      'send latency p50': /histogram_quantile\(0\.5, [^\n]*gateway_http_request_duration_seconds_bucket\{[^}]*send-message/,
      'send latency p99': /histogram_quantile\(0\.99, [^\n]*gateway_http_request_duration_seconds_bucket\{[^}]*send-message/,
      'consumer lag per group': /sum by \(group\) \(.*gateway_consumer_lag/,
      'decisions per second': /gateway_events_processed_total\{topic="send-requested"\}/,
      'open dead letters': /gateway_dead_letters_open/,
      'new dead letters': /gateway_dead_letters_total/,
      'webhook attempts by result': /sum by \(result\) \(rate\(gateway_webhook_attempts_total/,
      'webhook endpoints': /gateway_webhook_endpoints/,
      'circuit breakers': /gateway_circuit_breakers/,
      'chain check': /gateway_policy_chain_verify_ok/,
      'CPU per service': /sum by \(service\) \(rate\(process_cpu_seconds_total/,
      'memory per service': /sum by \(service\) \(process_resident_memory_bytes/,
    };
    for (const [what, pattern] of Object.entries(wanted)) expect(panelOf(pattern), what).not.toEqual([]);
  });

  it('uses no Grafana variable in a query but the interval ones (which the e2e test puts in as Grafana does)', () => {
    for (const { panel, expr } of dashboardQueries()) expect(expr, panel).not.toMatch(/\$/);
  });
});
