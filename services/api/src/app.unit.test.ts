import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMetrics } from '@gw/observability';
import { buildApp } from './app.ts';
import { unconnectedDashboard } from '@gw/dashboard';
import type { PbxDeps } from './pbx/route.ts';
import type { SendMessageDeps } from './send-message/route.ts';

// The app's own routes (GET /, the contract, the ops endpoints) and what it answers outside any
// route. None of them touches Postgres or Kafka: the app is built without them, as the OpenAPI
// generator builds it; the routes that do are tested beside them (*.int.test.ts).
let app: FastifyInstance;
const waitingFor: string[] = [];

beforeAll(async () => {
  app = await buildApp({
    logger: false,
    metrics: createMetrics('api-unit', false),
    readiness: { check: () => [...waitingFor] },
    publicBaseUrl: 'https://gateway.test',
    bodyLimitBytes: 1024,
    requestTimeoutMs: 5_000,
    idleTimeoutMs: 5_000,
    send: {} as SendMessageDeps,
    pbx: {} as PbxDeps,
    dashboard: unconnectedDashboard(),
  });
  await app.ready();
});

afterAll(async () => {
  await app?.close();
});

describe('GET /', () => {
  it('answers the smoke response', async () => {
    const response = await app.inject({ method: 'GET', url: '/' });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    expect(response.json()).toEqual({ service: 'chat-gateway', status: 'ok', contract: '/openapi.json' });
  });
});

describe('GET /openapi.json', () => {
  it('serves the committed v1 contract, with this deployment\'s base URL as its server', async () => {
    const response = await app.inject({ method: 'GET', url: '/openapi.json' });
    expect(response.statusCode).toBe(200);
    const served = response.json();
    const committed = JSON.parse(readFileSync(new URL('../../../openapi.json', import.meta.url), 'utf8'));
    expect(served.servers).toEqual([{ url: 'https://gateway.test', description: 'base_url' }]);
    expect({ ...served, servers: committed.servers }).toEqual(committed);
    expect(served).toMatchObject({ openapi: '3.0.3', info: { version: '1.0.0' } });
  });
});

describe('ops endpoints', () => {
  it('GET /healthz answers while the process runs', async () => {
    const response = await app.inject({ method: 'GET', url: '/healthz' });
    expect({ status: response.statusCode, body: response.json() }).toEqual({ status: 200, body: { status: 'ok' } });
  });

  it('GET /readyz answers 503 naming what is not ready, then 200', async () => {
    waitingFor.push('consumer api-replies');
    const waiting = await app.inject({ method: 'GET', url: '/readyz' });
    expect({ status: waiting.statusCode, body: waiting.json() }).toEqual({ status: 503, body: { status: 'not_ready', waiting_for: ['consumer api-replies'] } });
    waitingFor.length = 0;
    const ready = await app.inject({ method: 'GET', url: '/readyz' });
    expect({ status: ready.statusCode, body: ready.json() }).toEqual({ status: 200, body: { status: 'ready' } });
  });

  it('GET /metrics exposes request latency by route and status (an unknown route as unmatched)', async () => {
    await app.inject({ method: 'GET', url: '/' });
    await app.inject({ method: 'GET', url: '/nowhere' });
    const response = await app.inject({ method: 'GET', url: '/metrics' });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toMatch(/^text\/plain/);
    expect(response.body).toMatch(/gateway_http_request_duration_seconds_count\{[^}]*route="\/"[^}]*status_code="200"[^}]*\} [1-9]/);
    expect(response.body).toMatch(/gateway_http_request_duration_seconds_count\{[^}]*route="unmatched"[^}]*status_code="404"[^}]*\} [1-9]/);
  });
});

describe('outside any route', () => {
  it('an unknown route answers 404 in the ApiError shape, without the query string', async () => {
    const response = await app.inject({ method: 'GET', url: '/api/nope?token=secret' });
    expect({ status: response.statusCode, body: response.json() }).toEqual({
      status: 404,
      body: { success: false, error: 'not_found', message: 'No route GET /api/nope.', details: { method: 'GET', path: '/api/nope' } },
    });
  });

  it('a known path with another method is an unknown route too', async () => {
    const response = await app.inject({ method: 'GET', url: '/api/send-message' });
    expect({ status: response.statusCode, body: response.json() }).toEqual({
      status: 404,
      body: { success: false, error: 'not_found', message: 'No route GET /api/send-message.', details: { method: 'GET', path: '/api/send-message' } },
    });
  });

  it('a path that cannot be decoded is answered as an ApiError, never echoing the path', async () => {
    const response = await app.inject({ method: 'POST', url: '/integrations/instances/ins_1/events/%E0%A4%A' });
    expect({ status: response.statusCode, body: response.json() }).toEqual({
      status: 400,
      body: { success: false, error: 'validation_error', message: 'The request could not be processed.', details: { reason: 'FST_ERR_BAD_URL' } },
    });
  });
});
