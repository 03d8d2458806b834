import { createMetrics } from '@gw/observability';
import { buildApp } from './app.ts';
import { unconnectedDashboard } from '@gw/dashboard';
import type { SendMessageDeps } from './send-message/route.ts';
import type { PbxDeps } from './pbx/route.ts';

/**
 * Builds the OpenAPI document from the registered routes without connecting to anything:
 * handlers are never called, so their dependencies are not needed.
 */
export async function openapiDocument(serverUrl = '/'): Promise<Record<string, unknown>> {
  const app = await buildApp({
    logger: false,
    metrics: createMetrics('openapi', false),
    readiness: { check: () => [] },
    publicBaseUrl: serverUrl,
    bodyLimitBytes: 1024,
    requestTimeoutMs: 1000,
    idleTimeoutMs: 1000,
    send: {} as SendMessageDeps,
    pbx: {} as PbxDeps,
    dashboard: unconnectedDashboard(),
  });
  await app.ready();
  const document = app.swagger() as unknown as Record<string, unknown>;
  await app.close();
  return document;
}
