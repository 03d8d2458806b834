import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPool, sql, z, type Pool } from '@gw/db';
import { demoAccount, type DemoAccount } from '../support/accounts.ts';
import { followGatewayEvents, type EmittedGatewayEvent } from '../support/gateway-events.ts';
import { send } from '../support/http.ts';
import { startStack, type Stack } from '../support/stack.ts';
import { until } from '../support/suite.ts';

let stack: Stack;
let db: Pool;
let follower: Awaited<ReturnType<typeof followGatewayEvents>>;

beforeAll(async () => {
  stack = await startStack(['api', 'policy', 'delivery', 'instance-events'], { ACK_DEADLINE_MS: '3000', DELIVERY_SEND_TIMEOUT_MS: '1500' });
  db = await createPool(stack.isolation.databaseUrl, { maxConnections: 2 });
  follower = await followGatewayEvents(stack.env);
}, 180_000);

afterAll(async () => {
  await follower?.close();
  await db?.end();
  await stack?.stop();
});

let phoneCounter = 0;
const freshPhone = () => `+1415555${String(3000 + (phoneCounter++ % 7000)).padStart(4, '0')}`;

async function managerInstance(account: DemoAccount): Promise<string> {
  return db.oneFirst(sql.type(z.object({ manager_instance: z.string() }))`SELECT manager_instance FROM instances WHERE id = ${account.instance_id}`);
}

const eventsOf = (account: DemoAccount) => follower.events.filter((e) => e.instance_id === account.instance_id);

async function waitEvent(account: DemoAccount, match: (e: EmittedGatewayEvent) => boolean, what: string, timeoutMs = 15_000): Promise<EmittedGatewayEvent> {
  let found: EmittedGatewayEvent | undefined;
  await until(async () => Boolean((found = eventsOf(account).find(match))), timeoutMs, what);
  return found!;
}

async function sim(method: string, path: string, body?: unknown) {
  const result = await stack.simulator.call(method, path, body === undefined ? {} : { body });
  expect(result.status, JSON.stringify(result.body)).toBeLessThan(300);
  return result.body;
}

function sendTo(account: DemoAccount, phone: string) {
  return send(stack.apiUrl, account.api_key, { instance_id: account.instance_id, phone, message: `Your order ${phoneCounter} has shipped.`, message_purpose: 'transactional' });
}

describe('instance events in', () => {
  it('authenticates the manager per instance: a wrong token is 401, bad JSON 400, a duplicate is recorded once', async () => {
    const account = await demoAccount(stack);
    const wrong = await fetch(`${stack.apiUrl}/integrations/instances/${account.instance_id}/events/not-the-token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"event":"call"}' });
    expect(wrong.status).toBe(401);
    const unknown = await fetch(`${stack.apiUrl}/integrations/instances/ins_nope/events/whatever`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"event":"call"}' });
    expect(unknown.status).toBe(401);
    expect(((await unknown.json()) as { success: boolean }).success).toBe(false);

    // The real URL, as the manager holds it.
    const hook = (await sim('GET', `/webhook/find/${await managerInstance(account)}`)) as { url: string; headers: Record<string, string> };
    // The token is in the webhook's Authorization header, never in its URL.
    expect(hook.url).toMatch(new RegExp(`/integrations/instances/${account.instance_id}/events$`));
    expect(hook.headers).toEqual({ Authorization: expect.stringMatching(/^Bearer [A-Za-z0-9_-]{43}$/) });
    const auth = { 'content-type': 'application/json', authorization: hook.headers.Authorization! };
    const tokenHash = await db.oneFirst(sql.type(z.object({ webhook_token_hash: z.instanceof(Buffer).nullable() }))`SELECT webhook_token_hash FROM instances WHERE id = ${account.instance_id}`);
    expect(tokenHash).toBeInstanceOf(Buffer);
    const bad = await fetch(hook.url, { method: 'POST', headers: auth, body: '{not json' });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: string }).error).toBe('invalid_json');

    const envelope = JSON.stringify({ event: 'chats.update', instance: 'x', data: [{ remoteJid: '14155550999@s.whatsapp.net' }], date_time: new Date().toISOString(), apikey: 'secret' });
    const first = await fetch(hook.url, { method: 'POST', headers: auth, body: envelope });
    expect(await first.json()).toEqual({ success: true, status: 'accepted' });
    const again = await fetch(hook.url, { method: 'POST', headers: auth, body: envelope });
    expect(await again.json()).toEqual({ success: true, status: 'duplicate' });
    await waitEvent(account, (e) => e.event === 'conversation.updated' && e.body.conversation_id === '14155550999@s.whatsapp.net', 'conversation.updated');
  });

  it('pairing emits instance.qr_updated then instance.connected, and the projection follows', async () => {
    const account = await demoAccount(stack);
    const manager = await managerInstance(account);
    // The demo pairs at once; it reported its connection.
    await waitEvent(account, (e) => e.event === 'instance.connected', 'the demo pairing');
    await sim('POST', `/sim/instances/${manager}/disconnect`, {});
    await waitEvent(account, (e) => e.event === 'instance.disconnected', 'instance.disconnected');
    const mark = eventsOf(account).length;
    await sim('GET', `/instance/connect/${manager}`);
    await sim('POST', `/sim/instances/${manager}/pair`, {});
    await until(async () => eventsOf(account).slice(mark).some((e) => e.event === 'instance.connected'), 15_000, 'instance.connected after pairing');
    const names = eventsOf(account).slice(mark).map((e) => e.event);
    expect(names.indexOf('instance.qr_updated')).toBeGreaterThanOrEqual(0);
    expect(names.indexOf('instance.qr_updated')).toBeLessThan(names.indexOf('instance.connected'));
    const qr = eventsOf(account).slice(mark).find((e) => e.event === 'instance.qr_updated')!;
    expect(qr.body).toEqual({ event: 'instance.qr_updated', instance_id: account.instance_id, instance_name: account.instance_name, timestamp: expect.any(String), qr_available: true });
    expect(new Date(qr.body.timestamp as string).toISOString()).toBe(qr.body.timestamp);
    const connected = eventsOf(account).slice(mark).find((e) => e.event === 'instance.connected')!;
    expect(connected.body).toMatchObject({ instance_id: account.instance_id, instance_name: account.instance_name, connection_state: 'open' });
    expect(names).toContain('instance.connection_updated');
    await until(async () => {
      const row = await db.maybeOne(sql.type(z.object({ connection_state: z.string(), qr_available: z.boolean() }))`SELECT connection_state, qr_available FROM instance_connections WHERE instance_id = ${account.instance_id}`);
      return row?.connection_state === 'open' && row?.qr_available === false;
    }, 10_000, 'the connection projection to be open');
  });

  it('a send produces message.delivered then message.read', async () => {
    const account = await demoAccount(stack);
    const phone = freshPhone();
    const sent = await sendTo(account, phone);
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    await waitEvent(account, (e) => e.event === 'message.read' && e.body.from === phone, 'message.read');
    const lifecycle = eventsOf(account).filter((e) => e.body.from === phone && ['message.delivered', 'message.read'].includes(e.event));
    expect(lifecycle.map((e) => e.event)).toEqual(['message.delivered', 'message.read']);
    expect(lifecycle[0]!.body).toMatchObject({ status: 'delivered', external_message_id: expect.any(String) });
    expect(lifecycle[1]!.body.external_message_id).toBe(lifecycle[0]!.body.external_message_id);
    const statuses = eventsOf(account).filter((e) => e.body.from === phone && e.event === 'message.status_updated').map((e) => e.body.status);
    expect(statuses).toEqual(['sent', 'delivered', 'read']);
    // Kept for the dashboard's message timeline, by provider message id.
    const receipts = await db.anyFirst(sql.type(z.object({ status: z.string() }))`
      SELECT status FROM message_receipts WHERE instance_id = ${account.instance_id} AND provider_message_id = ${String(lifecycle[0]!.body.external_message_id)} ORDER BY status`);
    expect(receipts).toEqual(['delivered', 'read', 'sent']);
  });

  it('our own outcomes become message.sent, and an unknown number message.failed with a 502', async () => {
    const account = await demoAccount(stack);
    const phone = freshPhone();
    const sent = await sendTo(account, phone);
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    const event = await waitEvent(account, (e) => e.event === 'message.sent' && e.body.message_id === sent.body.message_id, 'message.sent');
    expect(event.body).toMatchObject({ event: 'message.sent', instance_id: account.instance_id, to: phone, message_purpose: 'transactional' });

    const failed = await sendTo(account, '+1 999 555 0177');
    expect(failed.status).toBe(502);
    const failure = await waitEvent(account, (e) => e.event === 'message.failed' && e.body.to === '+19995550177', 'message.failed');
    expect(failure.body).toMatchObject({ message_purpose: 'transactional', error: 'unknown_number' });
  });

  it('a send whose answer is lost is resolved from the manager\'s report: sent once, never resent', async () => {
    const account = await demoAccount(stack);
    const manager = await managerInstance(account);
    await sim('PUT', '/sim/faults', { instance: manager, mode: 'timeout', delay_ms: 4000, count: 1 });
    const phone = freshPhone();
    const result = await send(stack.apiUrl, account.api_key, { instance_id: account.instance_id, phone, message: 'Your parcel is at the pickup point.', message_purpose: 'transactional' });
    expect(result.status, JSON.stringify(result.body)).toBe(200);
    expect(result.body.status).toBe('sent');
    const ledger: Array<{ id: string; text: string }> = (await stack.simulator.call('GET', `/sim/ledger?instance=${manager}`)).body.messages;
    const copies = ledger.filter((m) => m.text === 'Your parcel is at the pickup point.');
    expect(copies).toHaveLength(1);
    // The resolution is appended just before its transaction commits: read it once committed.
    await until(async () => (await db.query(sql.unsafe`SELECT 1 FROM deliveries WHERE message_id = ${result.body.message_id} AND state = 'dispatched'`)).rowCount === 1, 10_000, 'the reconciled delivery');
    const row = await db.maybeOne(sql.type(z.object({ state: z.string(), provider_message_id: z.string().nullable() }))`SELECT state, provider_message_id FROM deliveries WHERE message_id = ${result.body.message_id}`);
    expect(row).toEqual({ state: 'dispatched', provider_message_id: copies[0]!.id });
    await waitEvent(account, (e) => e.event === 'message.sent' && e.body.message_id === result.body.message_id, 'message.sent after reconciliation');
  });

  it('a send with no answer and no report from the manager becomes message.failed (no_ack) after the deadline', async () => {
    const account = await demoAccount(stack);
    // A manager that accepts the connection and never answers.
    const { createServer } = await import('node:net');
    const silent = createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const port = (silent.address() as { port: number }).port;
    try {
      const { SecretBox } = await import('@gw/security');
      const { createInstance } = await import('@gw/accounts');
      const pool = await createPool(stack.isolation.databaseUrl, { maxConnections: 1 });
      const lost = await createInstance(pool, new SecretBox(stack.env.GATEWAY_SECRET_KEY!), {
        customerId: account.customer_id, name: 'silent-manager', managerUrl: `http://127.0.0.1:${port}`, managerApiKey: 'k', managerInstance: 'nowhere', createOnManager: false,
      });
      await pool.end();
      const result = await send(stack.apiUrl, account.api_key, { instance_id: lost.instance_id, phone: freshPhone(), message: 'Your visit is confirmed.', message_purpose: 'transactional' });
      // Never "failed" while it may have been sent: queued, then message.failed for the customer.
      expect(result.status, JSON.stringify(result.body)).toBe(200);
      expect(result.body.status).toBe('queued');
      const failed = await until(async () => {
        const row = await db.maybeOne(sql.type(z.object({ state: z.string(), failure_reason: z.string().nullable() }))`SELECT state, failure_reason FROM deliveries WHERE message_id = ${result.body.message_id}`);
        return row?.state === 'failed';
      }, 20_000, 'the no-ack deadline').then(() => true);
      expect(failed).toBe(true);
      const event = await new Promise<EmittedGatewayEvent>((resolve, reject) => {
        const deadline = Date.now() + 15_000;
        const poll = () => {
          const found = follower.events.find((e) => e.instance_id === lost.instance_id && e.event === 'message.failed');
          if (found) return resolve(found);
          if (Date.now() > deadline) return reject(new Error('no message.failed'));
          setTimeout(poll, 100);
        };
        poll();
      });
      expect(event.body).toMatchObject({ error: 'no_ack', message_purpose: 'transactional' });
    } finally {
      silent.close();
    }
  });

  it('an inbound STOP suppresses the recipient (403 recipient_suppressed); START lifts it', async () => {
    const account = await demoAccount(stack);
    const manager = await managerInstance(account);
    const phone = freshPhone();
    expect((await sendTo(account, phone)).status).toBe(200);

    await sim('POST', `/sim/instances/${manager}/inbound`, { from: phone, text: '  Stop! ' });
    const optedOut = await waitEvent(account, (e) => e.event === 'recipient.opted_out' && e.body.from === phone, 'recipient.opted_out');
    expect(optedOut.body).toMatchObject({ from: phone, reason: 'keyword:STOP', message_text: '  Stop! ' });
    await waitEvent(account, (e) => e.event === 'message.received' && e.body.from === phone, 'message.received');
    const refused = await sendTo(account, phone);
    expect(refused.status, JSON.stringify(refused.body)).toBe(403);
    expect(refused.body.error).toBe('recipient_suppressed');

    await sim('POST', `/sim/instances/${manager}/inbound`, { from: phone, text: 'START' });
    await waitEvent(account, (e) => e.event === 'message.received' && e.body.from === phone && e.body.message_text === 'START', 'START received');
    const again = await sendTo(account, phone);
    expect(again.status, JSON.stringify(again.body)).toBe(200);

    // Free text is flagged for review, not suppressed.
    await sim('POST', `/sim/instances/${manager}/inbound`, { from: phone, text: 'please stop messaging me' });
    await waitEvent(account, (e) => e.event === 'message.received' && e.body.message_text === 'please stop messaging me', 'free text received');
    expect((await sendTo(account, phone)).status).toBe(200);

    // The inbound log holds each message under the id of the message.received event it became,
    // marked as it was taken; the suppression history names the message behind each change.
    const receivedIds = eventsOf(account).filter((e) => e.event === 'message.received' && e.body.from === phone).map((e) => e.event_id);
    const inbound = await db.any(sql.type(z.object({ id: z.string(), sender: z.string(), message_text: z.string(), opt_action: z.string().nullable() }))`
      SELECT id, sender, message_text, opt_action FROM inbound_messages WHERE customer_id = ${account.customer_id} ORDER BY received_at`);
    expect(inbound.map((m) => [m.sender, m.message_text, m.opt_action])).toEqual([
      [phone, '  Stop! ', 'opt_out'],
      [phone, 'START', 'opt_in'],
      [phone, 'please stop messaging me', 'flagged'],
    ]);
    expect(inbound.map((m) => m.id)).toEqual(receivedIds);
    const history = await db.any(sql.type(z.object({ action: z.string(), reason: z.string(), instance_id: z.string().nullable(), inbound_message_id: z.string().nullable() }))`
      SELECT action, reason, instance_id, inbound_message_id FROM suppression_history WHERE customer_id = ${account.customer_id} AND recipient = ${phone} ORDER BY id`);
    expect(history).toEqual([
      { action: 'suppressed', reason: 'keyword:STOP', instance_id: account.instance_id, inbound_message_id: inbound[0]!.id },
      { action: 'unsuppressed', reason: 'keyword:START', instance_id: account.instance_id, inbound_message_id: inbound[1]!.id },
    ]);
  });

  it('a missed call maps to call.missed', async () => {
    const account = await demoAccount(stack);
    await sim('POST', `/sim/instances/${await managerInstance(account)}/call`, { from: '5511966665555', missed: true, ring_ms: 50 });
    const missed = await waitEvent(account, (e) => e.event === 'call.missed', 'call.missed');
    expect(missed.body).toMatchObject({ from: '+5511966665555', instance_id: account.instance_id });
    const names = eventsOf(account).map((e) => e.event).filter((n) => n.startsWith('call.'));
    expect(names).toEqual(['call.received', 'call.missed']);
  });

  it('an answered call is not missed', async () => {
    const account = await demoAccount(stack);
    await sim('POST', `/sim/instances/${await managerInstance(account)}/call`, { from: '5511966665556', missed: false, outcome: 'accept', ring_ms: 50, talk_ms: 50 });
    await waitEvent(account, (e) => e.event === 'call.received', 'call.received');
    await new Promise((r) => setTimeout(r, 1500));
    expect(eventsOf(account).some((e) => e.event === 'call.missed')).toBe(false);
  });

  it('a group message maps to group.message_received with group_id and from', async () => {
    const account = await demoAccount(stack);
    await sim('POST', `/sim/instances/${await managerInstance(account)}/group-message`, { group_id: '120363025246125486', participant: '5511977776666', text: 'hi all' });
    const received = await waitEvent(account, (e) => e.event === 'group.message_received', 'group.message_received');
    expect(received.body).toMatchObject({ group_id: '120363025246125486@g.us', from: '+5511977776666', message_text: 'hi all', external_message_id: expect.any(String) });
    expect(eventsOf(account).some((e) => e.event === 'message.received')).toBe(false);
  });
});
