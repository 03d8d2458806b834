import { describe, expect, it } from 'vitest';
import { loadConfig, processSetting, settingsSchema } from './index.ts';

// Each setting is declared once (libs/config/src/settings.ts): name, kind, default and doc.
describe('the settings schema', () => {
  it('documents every variable it declares', () => {
    const undocumented = Object.entries(settingsSchema.shape).filter(([, schema]) => !schema.description?.trim()).map(([name]) => name);
    expect(undocumented).toEqual([]);
  });

  it('refuses a bad value with a message naming the variable and what it got', () => {
    expect(() => loadConfig({ API_PORT: '-1' })).toThrow('Environment variable API_PORT must be a non-negative integer, got "-1"');
    expect(() => loadConfig({ WEBHOOK_RETRY_JITTER: '1' })).toThrow('Environment variable WEBHOOK_RETRY_JITTER must be a number in [0, 1), got "1"');
    expect(() => loadConfig({ WEBHOOK_RETRY_DELAYS_MS: '1,x' })).toThrow('Environment variable WEBHOOK_RETRY_DELAYS_MS must be a comma-separated list of non-negative whole numbers, got "1,x"');
    expect(() => loadConfig({ GATEWAY_ENV: 'dev' })).toThrow('Environment variable GATEWAY_ENV must be local or production, got "dev"');
    expect(() => loadConfig({ INSTANCE_EVENT_PATH_TOKENS: 'x' })).toThrow('Environment variable INSTANCE_EVENT_PATH_TOKENS must be accept or refuse, got "x"');
  });

  it('works out the defaults that follow other settings', () => {
    const config = loadConfig({ API_HOST: '10.0.0.1', API_PORT: '9000', KAFKA_PORT: '9092', REGISTRY_PORT: '8081', DELIVERY_SEND_TIMEOUT_MS: '1000' });
    expect(config.api.publicBaseUrl).toBe('http://10.0.0.1:9000');
    expect(config.kafkaBrokers).toEqual(['127.0.0.1:9092']);
    expect(config.schemaRegistryUrl).toBe('http://127.0.0.1:8081/apis/ccompat/v7');
    expect(config.delivery.resolveAfterMs).toBe(1_000 + 12_000 + 3_000); // the send timeout, the longest typing delay, 3 s
    // Human pacing: about 3.3 characters a second, 0.8 s to 12 s, ±20 %, codes untyped, a 1 to 1.5 s gap.
    expect(config.delivery.pacing).toEqual({ typingMsPerChar: 300, typingMinMs: 800, typingMaxMs: 12_000, typingJitter: 0.2, typingSkipPurposes: ['authentication'], gapMs: 1_000, gapJitter: 0.5 });
    expect(config.dashboard.secureCookies).toBe(false);
    expect(loadConfig({ PUBLIC_BASE_URL: 'https://gw.example.com' }).dashboard.secureCookies).toBe(true);
    expect(loadConfig({ PUBLIC_BASE_URL: 'https://gw.example.com', DASHBOARD_SECURE_COOKIES: 'false' }).dashboard.secureCookies).toBe(false);
    expect(loadConfig({}).webhooks.httpsOnly).toBe(true);
    expect(loadConfig({ WEBHOOK_ALLOW_HTTP: 'true' }).webhooks.httpsOnly).toBe(false);
    expect(loadConfig({ WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_HTTPS_ONLY: 'true' }).webhooks.httpsOnly).toBe(true);
  });

  it('reads one setting of the process alone, as declared', () => {
    expect(processSetting('STOP_WITH_PARENT_PID', { STOP_WITH_PARENT_PID: '4242' })).toBe(4242);
    expect(processSetting('STOP_WITH_PARENT_PID', { STOP_WITH_PARENT_PID: '1' })).toBeNull();
    expect(processSetting('NODE_ENV', {})).toBe('development');
    expect(() => processSetting('API_PORT', { API_PORT: 'x' })).toThrow('Environment variable API_PORT must be a non-negative integer, got "x"');
  });
});
