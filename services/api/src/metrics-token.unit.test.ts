import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMetrics } from '@gw/observability';
import { loadConfig } from '@gw/config';
import { buildApp, MetricsTokenMissing } from './app.ts';
import { unconnectedDashboard } from '@gw/dashboard';
import type { PbxDeps } from './pbx/route.ts';
import type { SendMessageDeps } from './send-message/route.ts';

// API_METRICS_TOKEN (config api.metricsToken): once set, GET /metrics is not public on the API's
// port. A scraper sends the token as a bearer token; anyone else gets the 404 of an unknown path,
// however the path is spelled. Built as app.unit.test.ts builds the app (no Postgres, no Kafka).
const TOKEN = 'scrape-token-for-tests-0123456789';
let app: FastifyInstance;

const deps = (metrics: { metricsToken?: string; metricsTokenRequired?: boolean }) => ({
  logger: false as const,
  metrics: createMetrics('api-metrics-token', false),
  readiness: { check: () => [] },
  publicBaseUrl: 'https://gateway.test',
  bodyLimitBytes: 1024,
  requestTimeoutMs: 5_000,
  idleTimeoutMs: 5_000,
  ...metrics,
  send: {} as SendMessageDeps,
  pbx: {} as PbxDeps,
  dashboard: unconnectedDashboard(),
});

beforeAll(async () => {
  app = await buildApp(deps({ metricsToken: TOKEN, metricsTokenRequired: true }));
  await app.ready();
});

afterAll(async () => {
  await app?.close();
});

const scrape = (url: string, authorization?: string) => app.inject({ method: 'GET', url, headers: authorization === undefined ? {} : { authorization } });

describe('GET /metrics with API_METRICS_TOKEN set', () => {
  it('answers 404, as an unknown path, without the token, with a wrong one, or with it in another form', async () => {
    for (const authorization of [undefined, 'Bearer wrong', `Bearer ${TOKEN}x`, TOKEN, `Basic ${TOKEN}`, `bearer ${TOKEN.slice(1)}`]) {
      const response = await scrape('/metrics', authorization);
      expect(response.statusCode, authorization).toBe(404);
      expect(response.json()).toEqual({ error: { code: 'not_found', message: 'Not found.' } });
      expect(response.body).not.toContain('http_request');
    }
  });

  it('answers 404 for every spelling of the path that reaches the metrics route', async () => {
    for (const url of ['/metrics?x=1', '/%6detrics', '/%6Detrics?x=1']) {
      const response = await scrape(url);
      expect(response.statusCode, url).toBe(404);
      expect(response.body, url).not.toMatch(/^# HELP/m);
    }
  });

  it('answers 200 with the metrics for the bearer token', async () => {
    const response = await scrape('/metrics', `Bearer ${TOKEN}`);
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toMatch(/^text\/plain/);
    expect(response.body).toMatch(/^# HELP /m);
  });

  it('leaves the other ops endpoints public', async () => {
    expect((await scrape('/healthz')).statusCode).toBe(200);
  });
});

describe('API_METRICS_TOKEN in production', () => {
  it('is required with NODE_ENV=production, and only then', () => {
    expect(loadConfig({ NODE_ENV: 'production' }).api.metricsTokenRequired).toBe(true);
    expect(loadConfig({}).api.metricsTokenRequired).toBe(false);
    expect(loadConfig({ NODE_ENV: 'test' }).api.metricsTokenRequired).toBe(false);
  });

  it('the API refuses to start without it, with a message naming the variable', async () => {
    const refused = await buildApp(deps({ metricsTokenRequired: true })).then(
      () => null,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(MetricsTokenMissing);
    expect((refused as Error).message).toMatch(/API_METRICS_TOKEN is not set\. With NODE_ENV=production the API refuses to start/);
    const empty = await buildApp(deps({ metricsToken: '', metricsTokenRequired: true })).catch((error: unknown) => error);
    expect(empty).toBeInstanceOf(MetricsTokenMissing);
  });

  it('outside production, /metrics stays open without a token', async () => {
    const local = await buildApp(deps({ metricsTokenRequired: false }));
    try {
      expect((await local.inject({ method: 'GET', url: '/metrics' })).statusCode).toBe(200);
    } finally {
      await local.close();
    }
  });
});
