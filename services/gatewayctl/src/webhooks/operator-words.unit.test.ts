import { describe, expect, it } from 'vitest';
import { loadConfig } from '@gw/config';
import { destinationRules } from './commands.ts';
import { checkWebhookChoice } from './operator-words.ts';

// The destination rules as gatewayctl reads them from the environment: https only unless
// WEBHOOK_ALLOW_HTTP opens plain http (docs/webhooks.md, "Destinations").
describe('an http destination', () => {
  const rulesOf = (env: Record<string, string>) => destinationRules(loadConfig({ WEBHOOK_ALLOW_CIDRS: '', ...env }));

  it('is refused by default, saying how to open it on purpose; https is taken', async () => {
    await expect(checkWebhookChoice('http://93.184.216.34/hook', ['recommended'], rulesOf({}))).rejects.toThrow(
      /https_required.*must use https:\/\/.*WEBHOOK_ALLOW_HTTP=true/,
    );
    await expect(checkWebhookChoice('https://93.184.216.34/hook', ['recommended'], rulesOf({}))).resolves.toMatchObject({ url: 'https://93.184.216.34/hook' });
  });

  it('is taken where WEBHOOK_ALLOW_HTTP=true opens it, unless WEBHOOK_HTTPS_ONLY=true still forces https', async () => {
    await expect(checkWebhookChoice('http://93.184.216.34/hook', ['recommended'], rulesOf({ WEBHOOK_ALLOW_HTTP: 'true' }))).resolves.toMatchObject({ url: 'http://93.184.216.34/hook' });
    await expect(checkWebhookChoice('http://93.184.216.34/hook', ['recommended'], rulesOf({ WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_HTTPS_ONLY: 'true' }))).rejects.toThrow(/https_required/);
  });
});
