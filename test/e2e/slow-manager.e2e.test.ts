import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPool, sql, z, type Pool } from '@gw/db';
import { demoAccount, type DemoAccount } from '../support/accounts.ts';
import { followGatewayEvents, type EmittedGatewayEvent } from '../support/gateway-events.ts';
import { send } from '../support/http.ts';
import { startStack, type Stack } from '../support/stack.ts';
import { until } from '../support/suite.ts';

// A manager slower than our send timeout (Evolution issue #2272) goes on with the send after we
// gave up (Express does not cancel an abandoned request): the message must never go out twice.
// With its store on, the late send is found; with it off, the send ends outcome_unknown.
let stack: Stack;
let db: Pool;
let follower: Awaited<ReturnType<typeof followGatewayEvents>>;

beforeAll(async () => {
  stack = await startStack(['api', 'policy', 'delivery', 'instance-events'], {
    DELIVERY_SEND_TIMEOUT_MS: '1500',
    DELIVERY_SEND_SETTLE_MS: '1500',
    DELIVERY_RESOLVE_AFTER_MS: '1500',
    DELIVERY_RESOLVE_EVERY_MS: '300',
  });
  db = await createPool(stack.isolation.databaseUrl, { maxConnections: 2 });
  follower = await followGatewayEvents(stack.env);
}, 180_000);

afterAll(async () => {
  await follower?.close();
  await db?.end();
  await stack?.stop();
});

let phoneCounter = 0;
const freshPhone = () => `+1415556${String(1000 + (phoneCounter++ % 8000)).padStart(4, '0')}`;
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function managerInstance(account: DemoAccount): Promise<string> {
  return db.oneFirst(sql.type(z.object({ manager_instance: z.string() }))`SELECT manager_instance FROM instances WHERE id = ${account.instance_id}`);
}

async function sim(method: string, path: string, body?: unknown) {
  const result = await stack.simulator.call(method, path, body === undefined ? {} : { body });
  expect(result.status, JSON.stringify(result.body)).toBeLessThan(300);
  return result.body;
}

async function copiesOf(manager: string, text: string): Promise<number> {
  const ledger: Array<{ text: string }> = (await sim('GET', `/sim/ledger?instance=${manager}`)).messages;
  return ledger.filter((m) => m.text === text).length;
}

const sendText = (account: DemoAccount, text: string) =>
  send(stack.apiUrl, account.api_key, { instance_id: account.instance_id, phone: freshPhone(), message: text, message_purpose: 'transactional' });

describe('a manager slower than the send timeout', () => {
  it('with its store on: the late send is found, answered sent, and goes out once', async () => {
    const account = await demoAccount(stack);
    const manager = await managerInstance(account);
    await sim('PUT', '/sim/faults', { instance: manager, mode: 'stall', delay_ms: 2_500, count: 1 });
    const result = await sendText(account, 'Your room key code is 4821.');
    expect(result.status, JSON.stringify(result.body)).toBe(200);
    expect(result.body.status).toBe('sent');
    await pause(1_500);
    expect(await copiesOf(manager, 'Your room key code is 4821.')).toBe(1);
  });

  it('with its store off: the send ends outcome_unknown (502 and message.failed), never sent a second time', async () => {
    const account = await demoAccount(stack);
    const manager = await managerInstance(account);
    await sim('PUT', '/sim/storage', { instance: manager, save_new_messages: false });
    // A message answered 201 that the store does not show: the store is not known to keep them.
    const first = await sendText(account, 'Welcome to the front desk.');
    expect(first.body.status).toBe('sent');
    await sim('PUT', '/sim/faults', { instance: manager, mode: 'stall', delay_ms: 2_500, count: 1 });

    const result = await sendText(account, 'Your table is ready.');
    expect(result.status, JSON.stringify(result.body)).toBe(502);
    expect(result.body).toMatchObject({ success: false, error: 'gateway_send_failed', details: { reason: 'outcome_unknown' } });
    expect(result.body.message).toMatch(/may or may not have been delivered/);
    const messageId = result.body.details.message_id as string;

    let failed: EmittedGatewayEvent | undefined;
    await until(async () => Boolean((failed = follower.events.find((e) => e.event === 'message.failed' && e.body.message_id === messageId))), 15_000, 'message.failed');
    expect(failed!.body).toMatchObject({ event: 'message.failed', instance_id: account.instance_id, error: 'outcome_unknown', message_purpose: 'transactional' });
    // The manager did send it, late; we never sent it again.
    await pause(3_000);
    expect(await copiesOf(manager, 'Your table is ready.')).toBe(1);
    const row = await db.one(sql.type(z.object({ state: z.string(), attempt: z.number(), failure_reason: z.string().nullable() }))`
      SELECT state, attempt, failure_reason FROM deliveries WHERE message_id = ${messageId}`);
    expect(row).toEqual({ state: 'failed', attempt: 1, failure_reason: 'outcome_unknown' });
  });
});
