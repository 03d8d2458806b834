// The number guard through the whole stack (issue 27, docs/policy.md "The number guard"), with the
// simulator as the instance manager posting exactly what Evolution 2.3.x posts:
// - a new instance's burst to new contacts stops at the warm-up's hourly allowance (day 0: 20),
//   while a reply to a person who wrote in first still goes;
// - an ERROR status on one of our sends (Evolution drops the network's code) restricts the
//   instance: new contacts are refused with the restriction's end, the customer's webhook gets
//   instance.connection_updated with the restriction, the usage page says it, replies still go;
// - a close 403 (banned) pauses the instance for review (423).
// Every instance here is paired by the demo (the simulator posts connection.update open), so each
// starts its warm-up on day 0. Limits other than the guard's are opened (accounts.ts OPEN_LIMITS),
// and every send goes to a distinct recipient.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setWebhook } from '@gw/accounts';
import { createPool, sql, z, type Pool } from '@gw/db';
import { SecretBox } from '@gw/security';
import { startWebhookReceiver, type ReceivedWebhook, type WebhookReceiver } from '../../services/instance-simulator/src/testing/webhook-receiver.ts';
import { demoAccount, type DemoAccount } from '../support/accounts.ts';
import { dashboardReader } from '../support/dashboard-reader.ts';
import { send, type HttpResult } from '../support/http.ts';
import { startStack, type Stack } from '../support/stack.ts';
import { until } from '../support/suite.ts';

// Customer webhooks to a loopback receiver, polled often: the same code paths, in test time.
const ENV = { WEBHOOK_ALLOW_CIDRS: '127.0.0.0/8', WEBHOOK_POLL_MS: '100', WEBHOOK_RETRY_JITTER: '0' };
const DESTINATION_RULES = { allowCidrs: ['127.0.0.0/8'], httpsOnly: false };
/** The warm-up's first contacts per hour and per day on an instance's first day (libs/policy guard/config.ts). */
const DAY_0_PER_HOUR = 20;
const DAY_0_PER_DAY = 50;
const HOUR = 3_600_000;

let stack: Stack;
let db: Pool;
let receiver: WebhookReceiver;

beforeAll(async () => {
  [stack, receiver] = await Promise.all([startStack(['api', 'policy', 'delivery', 'instance-events', 'webhooks'], ENV), startWebhookReceiver()]);
  db = await createPool(stack.isolation.databaseUrl, { maxConnections: 2 });
}, 180_000);

afterAll(async () => {
  await receiver?.close();
  await db?.end();
  await stack?.stop();
});

let phoneCounter = 0;
const freshPhone = () => `+1415777${String(phoneCounter++).padStart(4, '0')}`;

interface Paired {
  account: DemoAccount;
  /** The instance's name on the manager (the simulator). */
  manager: string;
}

/**
 * A fresh customer whose instance the demo just paired, with a webhook for every event, once the
 * policy holds the instance's first connection (the usage figures show the warm-up's allowance).
 */
async function pairedInstance(): Promise<Paired> {
  const account = await demoAccount(stack);
  await setWebhook(db, new SecretBox(stack.env.GATEWAY_SECRET_KEY!), { instanceId: account.instance_id, url: `${receiver.url}/hooks/${account.instance_id}`, events: ['all'], rules: DESTINATION_RULES });
  const manager = await db.oneFirst(sql.type(z.object({ manager_instance: z.string() }))`SELECT manager_instance FROM instances WHERE id = ${account.instance_id}`);
  await until(async () => {
    const row = await db.maybeOne(sql.type(z.object({ allowance: z.number().nullable() }))`
      SELECT warm_up_allowance_today AS allowance FROM instance_guard WHERE instance_id = ${account.instance_id} AND first_connected_at IS NOT NULL`);
    return row?.allowance === DAY_0_PER_DAY;
  }, 15_000, 'the policy to fold the instance\'s first connection (its warm-up allowance on the usage figures)');
  return { account, manager };
}

const sendTo = (account: DemoAccount, phone: string, message = `Your order ${phoneCounter} has shipped.`) =>
  send(stack.apiUrl, account.api_key, { instance_id: account.instance_id, phone, message, message_purpose: 'transactional' });

function expectAccepted(result: HttpResult, what: string): void {
  expect(result.status, `${what}: ${JSON.stringify(result.body)}`).toBe(200);
  expect(['sent', 'queued'], `${what}: ${JSON.stringify(result.body)}`).toContain(result.body.status);
}

async function sim(method: string, path: string, body: unknown = {}) {
  const result = await stack.simulator.call(method, path, { body });
  expect(result.status, `${method} ${path}: ${JSON.stringify(result.body)}`).toBeLessThan(300);
  return result.body;
}

/** `phone` writes to the instance (messages.upsert as Evolution posts it), and the customer is told. */
async function writesIn(paired: Paired, phone: string): Promise<void> {
  await sim('POST', `/sim/instances/${encodeURIComponent(paired.manager)}/inbound`, { from: phone.slice(1), text: 'Hello, is my order ready?' });
  await receiver.waitFor((h) => h.body?.instance_id === paired.account.instance_id && h.body?.event === 'message.received' && h.body?.from === phone, 1, 15_000);
}

/** The customer's instance.connection_updated webhooks that carry a restriction. */
const restrictionHook = (paired: Paired, signal: string) => (h: ReceivedWebhook) =>
  h.body?.instance_id === paired.account.instance_id && h.body?.event === 'instance.connection_updated' && h.body?.restriction === 'restricted' && h.body?.restriction_signal === signal;

describe('the number guard, through the whole stack', () => {
  it('a new instance\'s burst to new contacts stops at the warm-up\'s hourly allowance; a reply to someone who wrote first still goes', async () => {
    const paired = await pairedInstance();
    const { account } = paired;
    const replier = freshPhone();
    await writesIn(paired, replier);

    const burst = await Promise.all(Array.from({ length: DAY_0_PER_HOUR }, () => sendTo(account, freshPhone())));
    burst.forEach((result, i) => expectAccepted(result, `first contact ${i + 1} of ${DAY_0_PER_HOUR}`));

    const over = await sendTo(account, freshPhone());
    expect(over.status, JSON.stringify(over.body)).toBe(429);
    expect(over.body).toMatchObject({
      success: false,
      error: 'sending_throttled',
      details: {
        rule: 'first_contact_limit',
        control: 'warm_up_per_hour',
        schedule: 'warm_up',
        instance_age_days: 0,
        per_hour: DAY_0_PER_HOUR,
        first_contacts_last_hour: DAY_0_PER_HOUR,
        first_contact: true,
      },
    });
    // Until the first of the burst is an hour old.
    expect(over.body.details.retry_after_ms).toBeGreaterThan(HOUR - 60_000);
    expect(over.body.details.retry_after_ms).toBeLessThanOrEqual(HOUR);

    // The person who wrote in is no first contact: the reply goes, past the spent allowance.
    const reply = await sendTo(account, replier, 'Yes, it is ready for pickup.');
    expectAccepted(reply, 'the reply to a person who wrote in first');
    const entry = await db.one(sql.type(z.object({ reasons: z.array(z.object({ rule: z.string(), outcome: z.string(), detail: z.string().nullable() })) }))`
      SELECT reasons FROM policy_log WHERE log_id = ${reply.body.log_id}`);
    const limit = entry.reasons.find((r) => r.rule === 'first_contact_limit')!;
    expect(limit.outcome).toBe('pass');
    expect(JSON.parse(limit.detail!)).toEqual({ first_contact: false });
  });

  it('an ERROR status on one of our sends, as Evolution posts it, restricts the instance: new contacts wait, the customer is told, replies go', async () => {
    const paired = await pairedInstance();
    const { account, manager } = paired;
    const replier = freshPhone();
    await writesIn(paired, replier);

    const firstContact = freshPhone();
    const sent = await sendTo(account, firstContact);
    expectAccepted(sent, 'the first contact');
    let providerId: string | null = null;
    await until(async () => {
      providerId = await db.maybeOneFirst(sql.type(z.object({ id: z.string().nullable() }))`
        SELECT provider_message_id AS id FROM deliveries WHERE message_id = ${sent.body.message_id} AND state = 'dispatched'`);
      return providerId !== null;
    }, 15_000, 'the first contact to be dispatched');
    // WhatsApp refuses it (a 463/475 the network sends); Evolution posts messages.update "ERROR", no code.
    await sim('POST', `/sim/instances/${encodeURIComponent(manager)}/messages/${encodeURIComponent(providerId!)}/status`, { status: 'ERROR' });

    const [told] = await receiver.waitFor(restrictionHook(paired, 'send_error'), 1, 15_000);
    const restrictedUntil = Date.parse(told!.body.restricted_until);
    expect(told!.body).toEqual({
      event: 'instance.connection_updated',
      webhook_id: expect.any(String),
      instance_id: account.instance_id,
      instance_name: account.instance_name,
      timestamp: expect.any(String),
      connection_state: 'open',
      restriction: 'restricted',
      restricted_until: new Date(restrictedUntil).toISOString(),
      restriction_signal: 'send_error',
    });
    // No end time from Evolution: the first signal's back-off, an hour.
    expect(restrictedUntil - Date.parse(told!.body.timestamp)).toBe(HOUR);

    const refused = await sendTo(account, freshPhone());
    expect(refused.status, JSON.stringify(refused.body)).toBe(429);
    expect(refused.body).toMatchObject({
      error: 'sending_throttled',
      details: { rule: 'instance_not_restricted', control: 'instance_restricted', restriction_signal: 'send_error', restricted_until: told!.body.restricted_until, signals: 1, first_contact: true },
    });
    expect(refused.body.details.retry_after_ms).toBeGreaterThan(HOUR - 60_000);
    expect(refused.body.details.retry_after_ms).toBeLessThanOrEqual(HOUR);

    // Replies still go, and are delivered.
    const reply = await sendTo(account, replier, 'Yes, it is ready for pickup.');
    expectAccepted(reply, 'the reply while restricted');
    await receiver.waitFor((h) => h.body?.event === 'message.sent' && h.body?.message_id === reply.body.message_id, 1, 15_000);

    // The usage page says it in words, with the end.
    const reader = await dashboardReader(stack, account.customer_id);
    let page = { status: 0, html: '' };
    await until(async () => (page = await reader.get('/usage')).html.includes(`data-restricted-instance="${account.instance_id}"`), 10_000, 'the usage page\'s restriction notice');
    expect(page.status).toBe(200);
    const notice = new RegExp(`<p class="notice warn"[^>]*data-restricted-instance="${account.instance_id}"[^>]*>([\\s\\S]*?)</p>`).exec(page.html)?.[1] ?? '';
    expect(page.html).toContain(`data-until="${told!.body.restricted_until}"`);
    expect(notice).toMatch(/Restricted until .*the chat network rejected a message to a new contact\. Replies to people who wrote to you still go; new contacts wait\./);
  });

  it('a close 403 (banned), as Evolution posts it, pauses the instance for review: 423', async () => {
    const paired = await pairedInstance();
    await sim('POST', `/sim/instances/${encodeURIComponent(paired.manager)}/disconnect`, { status_reason: 403 });
    const [told] = await receiver.waitFor(restrictionHook(paired, 'banned'), 1, 15_000);
    expect(told!.body).toMatchObject({ connection_state: 'close', restriction: 'restricted' });

    const paused = await sendTo(paired.account, freshPhone());
    expect(paused.status, JSON.stringify(paused.body)).toBe(423);
    expect(paused.body).toMatchObject({ success: false, error: 'instance_paused_for_review', details: { rule: 'instance_not_paused' } });
  });
});
