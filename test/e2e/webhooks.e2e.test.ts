import { createHmac, timingSafeEqual } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql, z } from '@gw/db';
import { resolveSubscription, withWebhookId, type WebhookEventName } from '@gw/webhooks';
import { demoAccount, type DemoAccount } from '../support/accounts.ts';
import { gatewayctl } from '../support/cli.ts';
import { send } from '../support/http.ts';
import { until, useStack } from '../support/suite.ts';
import { gatewayEventWriter, WEBHOOK_EVENT_NAMES } from '../support/webhook-events.ts';
import { startWebhookReceiver, type ReceivedWebhook, type WebhookReceiver } from '../../services/instance-simulator/src/testing/webhook-receiver.ts';

// A schedule of seconds instead of hours, no jitter, and an endpoint failing for 2.5 s disabled:
// the same code paths as production, in test time.
const DELAYS = [0, 500, 1000, 1500];
const ENV = {
  WEBHOOK_ALLOW_CIDRS: '127.0.0.0/8',
  WEBHOOK_RETRY_DELAYS_MS: DELAYS.join(','),
  WEBHOOK_RETRY_JITTER: '0',
  WEBHOOK_DISABLE_AFTER_MS: '2500',
  WEBHOOK_POLL_MS: '100',
};

const suite = useStack({ services: ['api', 'policy', 'delivery', 'instance-events', 'webhooks'], env: ENV });
let writer: Awaited<ReturnType<typeof gatewayEventWriter>>;
const receivers: WebhookReceiver[] = [];

beforeAll(async () => {
  writer = await gatewayEventWriter(suite.stack.env);
}, 60_000);

afterAll(async () => {
  await writer?.close();
  await Promise.all(receivers.map((r) => r.close()));
});

async function receiver(): Promise<WebhookReceiver> {
  const r = await startWebhookReceiver();
  receivers.push(r);
  return r;
}

async function cli(...args: string[]) {
  const out = await gatewayctl({ ...suite.stack.env, ...ENV }, '--json', ...args);
  return { ...out, json: JSON.parse(out.stdout.trim().split('\n').pop() || 'null') };
}

/** A customer with a connected instance whose webhook posts the given events to the receiver. */
async function subscribed(r: WebhookReceiver, events: string): Promise<{ account: DemoAccount; secret: string; events: WebhookEventName[] }> {
  const account = await demoAccount(suite.stack);
  const set = await cli('webhook', 'set', '--instance', account.instance_id, '--url', `${r.url}/hooks`, '--events', events);
  expect(set.code, set.stdout + set.stderr).toBe(0);
  expect(set.json.signing_secret).toMatch(/^whsec_/);
  return { account, secret: set.json.signing_secret, events: resolveSubscription(events.split(',')) };
}

function emit(account: DemoAccount, events: readonly WebhookEventName[]) {
  return writer.emit(events.map((event) => ({ customerId: account.customer_id, instanceId: account.instance_id, instanceName: account.instance_name, event })));
}

/** The receiver's own check, written independently of the sender's code. */
function signatureValid(request: ReceivedWebhook, secret: string): boolean {
  const timestamp = String(request.headers['x-chat-gateway-timestamp']);
  const given = String(request.headers['x-chat-gateway-signature'] ?? '');
  if (!/^\d+$/.test(timestamp) || !given.startsWith('sha256=')) return false;
  const expected = createHmac('sha256', secret).update(`${timestamp}.`).update(request.raw).digest();
  const actual = Buffer.from(given.slice('sha256='.length), 'hex');
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

/** The body as posted: the appended event's body with the delivery id as webhook_id (docs/webhooks.md). */
const posted = (q: ReceivedWebhook, payload: string) => withWebhookId(payload, String(q.headers['webhook-id']));

const ofInstance = (r: WebhookReceiver, account: DemoAccount) => r.received.filter((q) => q.body.instance_id === account.instance_id);

async function deliveries(account: DemoAccount) {
  const out = await cli('webhook', 'deliveries', '--instance', account.instance_id, '--limit', '200');
  expect(out.code, out.stdout + out.stderr).toBe(0);
  return out.json as Array<{ delivery_id: string; event: string; state: string; attempts: number; attempts_log: Array<{ attempt: number; attempted_at: string; status_code: number | null; error: string | null; outcome: string; next_attempt_at: string | null }> }>;
}

const EndpointStatus = z.object({ status: z.string(), disabled_reason: z.string().nullable() });
const EndpointHealth = z.object({ consecutive_failures: z.number(), failing: z.boolean(), succeeded: z.boolean() });

async function endpointStatus(account: DemoAccount) {
  return suite.db.one(sql.type(EndpointStatus)`SELECT status, disabled_reason FROM webhook_endpoints WHERE instance_id = ${account.instance_id}`);
}

/** The health the sender keeps for an endpoint, folded from its attempts. */
async function endpointHealth(account: DemoAccount) {
  return suite.db.one(sql.type(EndpointHealth)`
    SELECT consecutive_failures, failing_since IS NOT NULL AS failing, last_success_at IS NOT NULL AS succeeded FROM webhook_endpoints WHERE instance_id = ${account.instance_id}`);
}

describe('customer webhooks', () => {
  it('each of the sixteen events reaches the receiver subscribed to it and no other, signed over the raw body', async () => {
    const groups = ['recommended', 'instance,lifecycle', 'conversation,call,group'];
    const subs = await Promise.all(groups.map(async (events) => ({ r: await receiver(), events })).map(async (p) => {
      const { r, events } = await p;
      return { r, ...(await subscribed(r, events)) };
    }));
    // The three subscriptions cover the sixteen events between them, with no overlap.
    expect(subs.flatMap((s) => s.events).sort()).toEqual([...WEBHOOK_EVENT_NAMES].sort());
    // A fourth instance without a webhook, and every instance is sent all sixteen events.
    const silent = await demoAccount(suite.stack);
    const emitted = (await Promise.all([...subs.map((s) => emit(s.account, WEBHOOK_EVENT_NAMES)), emit(silent, WEBHOOK_EVENT_NAMES)])).flat();

    for (const s of subs) {
      const expected = emitted.filter((e) => e.instance_id === s.account.instance_id && s.events.includes(e.event as WebhookEventName));
      await until(async () => expected.every((e) => s.r.received.some((q) => q.raw.toString('utf8') === posted(q, e.payload))), 20_000, `${s.events.length} events at the receiver for ${s.account.instance_id}`);
    }
    for (const s of subs) {
      // Everything this receiver got is its own instance's, of a subscribed kind (pairing may add real instance events).
      for (const q of s.r.received) {
        expect(q.body.instance_id).toBe(s.account.instance_id);
        expect(s.events).toContain(q.body.event);
        expect(q.headers['x-chat-gateway-event']).toBe(q.body.event);
        expect(q.headers['content-type']).toBe('application/json');
        expect(q.headers['x-chat-gateway-delivery']).toMatch(/^whd_[0-9a-f]{32}$/);
        expect(q.headers['webhook-id']).toBe(q.headers['x-chat-gateway-delivery']);
        expect(Math.abs(Number(q.headers['x-chat-gateway-timestamp']) - Date.now() / 1000)).toBeLessThan(300);
        expect(signatureValid(q, s.secret)).toBe(true);
        expect(signatureValid(q, subs.find((o) => o !== s)!.secret)).toBe(false);
      }
      // Of the events appended for it, exactly the subscribed ones arrived, each once.
      const mine = emitted.filter((e) => e.instance_id === s.account.instance_id);
      for (const e of mine) expect(s.r.received.filter((q) => q.raw.toString('utf8') === posted(q, e.payload)).length).toBe(s.events.includes(e.event as WebhookEventName) ? 1 : 0);
    }
    // Nothing of the instance without a webhook reached anyone.
    for (const s of subs) expect(ofInstance(s.r, silent)).toEqual([]);
  }, 120_000);

  it('a real send through the API is posted as message.sent, signed', async () => {
    const r = await receiver();
    const { account, secret } = await subscribed(r, 'recommended');
    const sent = await send(suite.stack.apiUrl, account.api_key, { instance_id: account.instance_id, phone: '+14155550177', message: 'Your order 42 has shipped.', message_purpose: 'transactional' });
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    await until(async () => r.received.some((q) => q.body.event === 'message.sent'), 20_000, 'message.sent at the receiver');
    const q = r.received.find((x) => x.body.event === 'message.sent')!;
    expect(q.body).toMatchObject({ event: 'message.sent', instance_id: account.instance_id, instance_name: account.instance_name, to: '+14155550177', message_purpose: 'transactional' });
    expect(typeof q.body.timestamp).toBe('string');
    expect(signatureValid(q, secret)).toBe(true);
  }, 60_000);

  it('a receiver down for several attempts gets everything once it recovers, and the attempts log shows the schedule', async () => {
    const r = await receiver();
    const { account } = await subscribed(r, 'recommended');
    await r.stop(); // connections refused
    await emit(account, ['message.received', 'message.sent', 'message.failed']);
    await until(async () => {
      const list = await deliveries(account);
      return list.length === 3 && list.every((d) => d.attempts >= 2);
    }, 20_000, 'two failed attempts of each delivery');
    await r.start();
    await until(async () => (await deliveries(account)).every((d) => d.state === 'delivered'), 20_000, 'every delivery delivered after the receiver recovered');

    expect(ofInstance(r, account).map((q) => q.body.event).sort()).toEqual(['message.failed', 'message.received', 'message.sent']);
    for (const d of await deliveries(account)) {
      const log = d.attempts_log;
      expect(log.length).toBeGreaterThanOrEqual(3);
      expect(log.map((a) => a.attempt)).toEqual(log.map((_, i) => i + 1));
      expect(log.at(-1)).toMatchObject({ outcome: 'delivered', status_code: 200, error: null });
      for (const [i, a] of log.slice(0, -1).entries()) {
        expect(a).toMatchObject({ outcome: 'retry', status_code: null });
        expect(a.error).toMatch(/network_error/);
        // Each retry waited at least its place in the schedule, counted from the previous attempt.
        const gap = Date.parse(log[i + 1]!.attempted_at) - Date.parse(a.attempted_at);
        expect(gap).toBeGreaterThanOrEqual(DELAYS[i + 1]! - 5);
        expect(Date.parse(a.next_attempt_at!) - Date.parse(a.attempted_at)).toBeGreaterThanOrEqual(DELAYS[i + 1]!);
      }
      // The same delivery id on every attempt, so the receiver can deduplicate.
      const got = ofInstance(r, account).filter((q) => q.body.event === d.event);
      expect(got.map((q) => q.headers['x-chat-gateway-delivery'])).toEqual([d.delivery_id]);
      expect(got[0]!.headers['x-chat-gateway-attempt']).toBe(String(log.length));
    }
    expect(await endpointStatus(account)).toMatchObject({ status: 'active' });
  }, 60_000);

  it('429 and 503 are retried no earlier than Retry-After', async () => {
    const r = await receiver();
    const { account } = await subscribed(r, 'recommended');
    r.answer = (_q, n) => (n === 1 ? { status: 503, headers: { 'Retry-After': '2' } } : { status: 200 });
    await emit(account, ['message.received']);
    await until(async () => (await deliveries(account))[0]?.state === 'delivered', 20_000, 'delivered after the Retry-After');
    const [first, second] = ofInstance(r, account);
    expect(second!.at - first!.at).toBeGreaterThanOrEqual(2000 - 50);
    const [log] = (await deliveries(account)).map((d) => d.attempts_log);
    expect(log![0]).toMatchObject({ status_code: 503, outcome: 'retry' });
    expect(log![0]!.error).toMatch(/Retry-After 2 s honoured/);
  }, 60_000);

  it('410 disables the endpoint at once: nothing more is queued until it is resumed, and recover sends what it missed', async () => {
    const r = await receiver();
    const { account } = await subscribed(r, 'recommended');
    r.answer = () => ({ status: 410 });
    await emit(account, ['message.received']);
    await until(async () => (await endpointStatus(account)).status === 'disabled', 20_000, 'the endpoint disabled');
    expect(await endpointStatus(account)).toEqual({ status: 'disabled', disabled_reason: 'gone' });
    expect(ofInstance(r, account)).toHaveLength(1);

    const since = new Date(Date.now() - 60_000).toISOString();
    await emit(account, ['message.sent', 'message.failed']);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(ofInstance(r, account)).toHaveLength(1);
    expect(await deliveries(account)).toHaveLength(1);

    r.answer = () => ({ status: 200 });
    expect((await cli('webhook', 'resume', '--instance', account.instance_id)).code).toBe(0);
    const recovered = await cli('webhook', 'recover', '--instance', account.instance_id, '--since', since);
    expect(recovered.code, recovered.stdout + recovered.stderr).toBe(0);
    await until(async () => {
      const events = ofInstance(r, account).map((q) => q.body.event);
      return ['message.sent', 'message.failed', 'message.received'].every((e) => events.filter((x) => x === e).length >= (e === 'message.received' ? 2 : 1));
    }, 20_000, 'the missed events and the refused one delivered after recover');
    expect((await deliveries(account)).every((d) => d.state === 'delivered')).toBe(true);
    expect(await endpointHealth(account)).toEqual({ consecutive_failures: 0, failing: false, succeeded: true });
  }, 60_000);

  it('a redirect is a failed attempt and is not followed; an endpoint failing every attempt for too long is disabled', async () => {
    const target = await receiver();
    const r = await receiver();
    const { account } = await subscribed(r, 'recommended');
    r.answer = () => ({ status: 302, headers: { Location: `${target.url}/hooks` } });
    await emit(account, ['message.received']);
    await until(async () => (await endpointStatus(account)).status === 'disabled', 20_000, 'the endpoint disabled for failing too long');
    expect(await endpointStatus(account)).toEqual({ status: 'disabled', disabled_reason: 'failing_too_long' });
    expect(await endpointHealth(account)).toEqual({ consecutive_failures: DELAYS.length, failing: true, succeeded: false });
    expect(target.received).toEqual([]);
    const [d] = await deliveries(account);
    expect(d!.attempts_log.map((a) => a.status_code)).toEqual(DELAYS.map(() => 302));
    expect(d!.attempts_log[0]!.error).toMatch(/redirect/);
    expect(d!.state).toBe('failed');
  }, 60_000);

  it('resend posts a delivered event again with the same delivery id and the next attempt number', async () => {
    const r = await receiver();
    const { account } = await subscribed(r, 'recommended');
    await emit(account, ['message.received']);
    await until(async () => (await deliveries(account))[0]?.state === 'delivered', 20_000, 'delivered');
    const [d] = await deliveries(account);
    const out = await cli('webhook', 'resend', d!.delivery_id);
    expect(out.code, out.stdout + out.stderr).toBe(0);
    await until(async () => ofInstance(r, account).length === 2, 20_000, 'the resent delivery');
    const [first, again] = ofInstance(r, account);
    expect(again!.raw.equals(first!.raw)).toBe(true);
    expect(again!.headers['x-chat-gateway-delivery']).toBe(first!.headers['x-chat-gateway-delivery']);
    expect(again!.headers['x-chat-gateway-attempt']).toBe('2');
  }, 60_000);

  it('a SIGTERM while an attempt is in flight waits for its answer and records it, so the delivery is not posted again', async () => {
    const r = await receiver();
    const { account } = await subscribed(r, 'recommended');
    r.answer = () => ({ status: 200, delayMs: 1500 });
    await emit(account, ['message.sent']);
    await until(async () => ofInstance(r, account).length === 1, 20_000, 'the attempt in flight');
    await suite.stack.kill('webhooks', 'SIGTERM');
    try {
      // The process went only after recording it: delivered after one attempt, nothing left in flight for a later retry.
      const rows = await suite.db.any(sql.type(z.object({ state: z.string(), attempts: z.number() }))`
        SELECT d.state, (SELECT count(*)::int FROM webhook_attempts a WHERE a.delivery_id = d.delivery_id) AS attempts FROM webhook_deliveries d WHERE d.instance_id = ${account.instance_id}`);
      expect(rows).toEqual([{ state: 'delivered', attempts: 1 }]);
      expect(ofInstance(r, account).map((q) => q.answered)).toEqual([200]);
    } finally {
      await suite.stack.start('webhooks');
    }
  }, 60_000);

  it('one dead endpoint does not slow the others: a healthy endpoint gets all its events while the dead one still hangs', async () => {
    const dead = await receiver();
    const healthy = await receiver();
    dead.answer = () => 'hang';
    const a = await subscribed(dead, 'recommended');
    const b = await subscribed(healthy, 'recommended');
    const kinds: WebhookEventName[] = ['message.received', 'message.sent', 'message.failed', 'recipient.opted_out'];
    const many = (n: number) => Array.from({ length: n }, (_, i) => kinds[i % kinds.length]!);
    // The dead endpoint's events go first, so they are due before the healthy one's.
    await emit(a.account, many(200));
    await new Promise((resolve) => setTimeout(resolve, 300));
    const started = Date.now();
    await emit(b.account, many(200));
    await until(async () => ofInstance(healthy, b.account).length >= 200, 14_000, 'every healthy delivery while the dead endpoint hangs');
    // No attempt to the dead endpoint has even finished yet (each waits for the 15 s timeout)…
    const attempts = await suite.db.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*) AS n FROM webhook_attempts a JOIN webhook_deliveries d USING (delivery_id) WHERE d.instance_id = ${a.account.instance_id}`);
    expect(attempts).toBe(0);
    expect(Date.now() - started).toBeLessThan(15_000);
    // …and it holds no more than its own concurrency.
    expect(dead.received.length).toBeLessThanOrEqual(16);
    expect(dead.received.length).toBeGreaterThan(0);
  }, 60_000);
});
