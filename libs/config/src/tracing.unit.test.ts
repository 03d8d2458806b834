import { describe, expect, it } from 'vitest';
import { loadConfig } from './index.ts';

describe('tracing settings (OpenTelemetry standard variables)', () => {
  it('is off without an OTLP endpoint', () => {
    expect(loadConfig({}).tracing).toEqual({ tracesUrl: null, scheduleDelayMs: 5_000 });
  });

  it('posts to the base endpoint\'s /v1/traces, or to the traces endpoint as given', () => {
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' }).tracing.tracesUrl).toBe('http://collector:4318/v1/traces');
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://traces:9999/in' }).tracing.tracesUrl).toBe('http://traces:9999/in');
  });

  it('reads the batch delay, and stays off when the SDK is disabled', () => {
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_BSP_SCHEDULE_DELAY: '100' }).tracing).toEqual({ tracesUrl: 'http://c:4318/v1/traces', scheduleDelayMs: 100 });
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_SDK_DISABLED: 'true' }).tracing.tracesUrl).toBeNull();
  });

  it('refuses an endpoint that is not a URL', () => {
    expect(() => loadConfig({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'not a url' })).toThrow(/must be a URL/);
  });
});
