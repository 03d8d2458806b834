import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMetrics } from '@gw/observability';
import { buildApp } from './app.ts';
import { unconnectedDashboard } from '@gw/dashboard';
import type { PbxDeps } from './pbx/route.ts';
import type { SendMessageDeps } from './send-message/route.ts';

// API_METRICS_TOKEN (config api.metricsToken): once set, GET /metrics is not public on the API's
// port. A scraper sends the token as a bearer token; anyone else gets the 404 of an unknown path,
// however the path is spelled. Built as app.unit.test.ts builds the app (no Postgres, no Kafka).
const TOKEN = 'scrape-token-for-tests-0123456789';
let app: FastifyInstance;

beforeAll(async () => {
  app = await buildApp({
    logger: false,
    metrics: createMetrics('api-metrics-token', false),
    readiness: { check: () => [] },
    publicBaseUrl: 'https://gateway.test',
    bodyLimitBytes: 1024,
    requestTimeoutMs: 5_000,
    idleTimeoutMs: 5_000,
    metricsToken: TOKEN,
    send: {} as SendMessageDeps,
    pbx: {} as PbxDeps,
    dashboard: unconnectedDashboard(),
  });
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
