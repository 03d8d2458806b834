import type { Pool } from '@gw/db';
import type { SecretBox } from '@gw/security';
import { randomBytes } from 'node:crypto';
import { createApiKey, createCustomer, createInstance, createPbx, saveWebhook, setInstanceWebhook, type DestinationRules } from '@gw/accounts';
import { pairOnSimulator } from './simulator.ts';
import type { FactLog } from '../policy/fact-log.ts';
import { setPlan, toggleModules } from '../policy/commands.ts';
import { checkWebhookChoice } from '../webhooks/operator-words.ts';

export interface DemoSettings {
  baseUrl: string;
  simulatorUrl: string;
  simulatorKey: string;
  /** Defaults to the Growth plan. */
  plan?: string;
  /** Also sign the demo PBX integration's webhooks with HMAC. */
  pbxHmac?: boolean;
  /** Also configure the instance's customer webhook (events: names and/or groups). */
  webhook?: { url: string; events: readonly string[]; rules: DestinationRules };
}

/** A fresh customer with a connected simulator instance and an API key, ready for a first send. */
export async function createDemo(pool: Pool, box: SecretBox, facts: FactLog, settings: DemoSettings) {
  // Checked before anything is created, so a refused URL leaves no half-made demo account behind.
  const webhookChoice = settings.webhook ? await checkWebhookChoice(settings.webhook.url, settings.webhook.events, settings.webhook.rules) : undefined;
  const suffix = randomBytes(3).toString('hex');
  const customer = await createCustomer(pool, facts, `Demo customer ${suffix}`);
  await setPlan(pool, facts, { customerId: customer.customer_id, plan: settings.plan ?? 'growth', by: 'demo', reason: 'demo account' });
  const instance = await createInstance(pool, box, {
    customerId: customer.customer_id,
    name: `demo-${suffix}`,
    managerUrl: settings.simulatorUrl,
    managerApiKey: settings.simulatorKey,
    createOnManager: true,
  });
  // Before pairing, so the instance's events (its connection first) reach the gateway.
  await setInstanceWebhook(pool, box, { instanceId: instance.instance_id, baseUrl: settings.baseUrl });
  await pairOnSimulator(settings.simulatorUrl, settings.simulatorKey, instance.manager_instance);
  const key = await createApiKey(pool, customer.customer_id, 'demo');
  await toggleModules(pool, facts, { customerId: customer.customer_id, enable: ['pbx'], disable: [], by: 'demo' });
  const pbx = await createPbx(pool, box, { customerId: customer.customer_id, instanceId: instance.instance_id, hmac: settings.pbxHmac ?? false, baseUrl: settings.baseUrl });
  const webhook = webhookChoice ? await saveWebhook(pool, box, instance.instance_id, webhookChoice) : undefined;
  return {
    base_url: settings.baseUrl,
    customer_id: customer.customer_id,
    instance_id: instance.instance_id,
    instance_name: instance.instance_name,
    api_key: key.api_key,
    pbx_integration_id: pbx.pbx_integration_id,
    pbx_secret: pbx.pbx_secret,
    ...(pbx.pbx_signing_secret ? { pbx_signing_secret: pbx.pbx_signing_secret } : {}),
    ...(webhook?.signing_secret ? { webhook_signing_secret: webhook.signing_secret } : {}),
  };
}
