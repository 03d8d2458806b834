import { createPool } from '@gw/db';
import { SecretBox } from '@gw/security';
import { createDemo } from '../../services/gatewayctl/src/accounts/demo.ts';
import { createApiKey, revokeApiKey } from '../../services/gatewayctl/src/accounts/api-keys.ts';
import type { Stack } from './stack.ts';

export interface DemoAccount {
  base_url: string;
  customer_id: string;
  instance_id: string;
  instance_name: string;
  api_key: string;
}

/** A fresh customer with a connected simulator instance and an API key, made as the CLI's demo does. */
export async function demoAccount(stack: Stack): Promise<DemoAccount> {
  const pool = createPool(stack.isolation.databaseUrl, 1);
  try {
    return await createDemo(pool, new SecretBox(stack.env.GATEWAY_SECRET_KEY!), {
      baseUrl: stack.apiUrl,
      simulatorUrl: stack.simulator.baseUrl,
      simulatorKey: stack.simulator.globalKey,
    });
  } finally {
    await pool.end();
  }
}

export async function extraKey(stack: Stack, customerId: string, revoke = false): Promise<string> {
  const pool = createPool(stack.isolation.databaseUrl, 1);
  try {
    const key = await createApiKey(pool, customerId, 'extra');
    if (revoke) await revokeApiKey(pool, key.key_id);
    return key.api_key;
  } finally {
    await pool.end();
  }
}
