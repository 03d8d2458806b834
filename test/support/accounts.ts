import { loadConfig } from '@gw/config';
import { createPool, sql, type Pool } from '@gw/db';
import { generate } from 'otplib';
import { SecretBox } from '@gw/security';
import { createApiKey, revokeApiKey } from '@gw/accounts';
import { createDemo } from '../../services/gatewayctl/src/accounts/demo.ts';
import { setLimits } from '../../services/gatewayctl/src/policy/commands.ts';
import { FactLog } from '../../services/gatewayctl/src/policy/fact-log.ts';
import type { Stack } from './stack.ts';

export interface DemoAccount {
  base_url: string;
  customer_id: string;
  instance_id: string;
  instance_name: string;
  api_key: string;
  pbx_integration_id: number;
  pbx_secret: string;
  pbx_signing_secret?: string;
}

export interface AccountOptions {
  plan?: string;
  /**
   * Raise every limit (as a manual review would), for tests about something other than limits:
   * they send many messages, often to one recipient, often with one template.
   */
  unlimited?: boolean;
}

/** Runs operator commands against a stack's database and Kafka, as gatewayctl does. */
export async function withOperator<T>(stack: Stack, work: (tools: { pool: Pool; facts: FactLog }) => Promise<T>): Promise<T> {
  const pool = await createPool(stack.isolation.databaseUrl, { maxConnections: 1 });
  const facts = new FactLog(loadConfig(stack.env));
  try {
    return await work({ pool, facts });
  } finally {
    await facts.close();
    await pool.end();
  }
}

/** Every limit opened, as a manual review would, for tests about something other than limits. */
export const OPEN_LIMITS = {
  daily: 1_000_000,
  monthly: 10_000_000,
  burst: 1_000_000,
  refillPerMinute: 1_000_000,
  recipientIntervalMs: 0,
  bulkRecipients: 1_000_000,
  reason: 'test account: limits raised for functional tests',
  by: 'test-suite',
};

/** A fresh customer with a connected simulator instance and an API key, made as the CLI's demo does. */
export async function demoAccount(stack: Stack, options: AccountOptions = { unlimited: true }): Promise<DemoAccount> {
  return withOperator(stack, async ({ pool, facts }) => {
    const demo = await createDemo(pool, new SecretBox(stack.env.GATEWAY_SECRET_KEY!), facts, {
      baseUrl: stack.apiUrl,
      simulatorUrl: stack.simulator.baseUrl,
      simulatorKey: stack.simulator.globalKey,
      plan: options.plan ?? 'scale',
    });
    if (options.unlimited) {
      await setLimits(pool, facts, { ...OPEN_LIMITS, customerId: demo.customer_id });
    }
    return demo;
  });
}

export async function extraKey(stack: Stack, customerId: string, revoke = false): Promise<string> {
  return withOperator(stack, async ({ pool }) => {
    const key = await createApiKey(pool, customerId, 'extra');
    if (revoke) await revokeApiKey(pool, key.key_id);
    return key.api_key;
  });
}

/**
 * The current code of a dashboard user's authenticator, usable now. Each code works once per user
 * (`users.totp_last_step`, mfa/totp.ts), so a browser journey that asks for several codes within
 * one 30 s period would wait for the next one each time: this forgets the user's last used step
 * first, as if the next period had come (as `totpNow` does for the route tests).
 */
export async function unusedTotpCode(stack: Stack, email: string, secret: string): Promise<string> {
  const pool = await createPool(stack.isolation.databaseUrl, { maxConnections: 1 });
  try {
    await pool.query(sql.typeAlias('void')`UPDATE users SET totp_last_step = NULL WHERE email = ${email}`);
  } finally {
    await pool.end();
  }
  return generate({ secret });
}
