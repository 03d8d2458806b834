import { beforeAll, describe, expect, it } from 'vitest';
import { sql, z } from '@gw/db';
import type { SendDecided } from '@gw/events';
import { RULES } from '@gw/policy';
import { insertEntries } from '@gw/policy-log';
import type { StageBatch } from '@gw/runtime';
import { deliveryIdFor } from '@gw/webhooks';
import { useApiFixture, type TestAccount } from '../../../../test/support/api/api-fixture.ts';
import { decision } from '../../../../test/support/api/fake-replies.ts';
import { memberWithRole, type TestMember } from '../../../../test/support/dashboard/members.ts';
import { textOf } from '../../../../test/support/dashboard/page-client.ts';
import { webhookDeliveryIds } from './store.ts';
// The stages that write these rows in the pipeline, reached by path as other services' int tests do:
// the delivery stage's own writer, the instance-events stage that turns a delivery outcome into a
// gateway event, and the webhooks service's enqueue stage that makes the webhook delivery of it.
import { claim, recordOutcomes, type DeliveryOutcome } from '../../../../services/delivery/src/dispatch/delivery-store.ts';
import { taskOf } from '../../../../services/delivery/src/dispatch/outcomes.ts';
import { mapDeliveryOutcomes } from '../../../../services/instance-events/src/delivery-outcomes.ts';
import { enqueueGatewayEvents } from '../../../../services/webhooks/src/enqueue/handler.ts';

// The message search and the timeline of one message, in-process over real Postgres: the policy
// log, deliveries, receipts and webhook deliveries are written as their stages write them (the
// stages themselves do not run here), then read through the pages.
const suite = useApiFixture();
const app = () => suite.fixture.app;
const pool = () => suite.fixture.runtime.pool;

const MINUTE = 60_000;
const DAY = 86_400_000;
const TEXT = 'Your appointment is on Tuesday at 10:00. Reply STOP to opt out.';
const EVENTS = ['message.sent', 'message.failed', 'message.delivered', 'message.read', 'message.status_updated', 'message.received'];

let mine: TestAccount;
let theirs: TestAccount;
let owner: TestMember;
let developer: TestMember;
let compliance: TestMember;
let viewer: TestMember;
let stranger: TestMember;
let nextLogId = 5000;

/** The reasons of a decision as the engine records them: every rule in order, each with its details. */
function reasons(refusedBy?: string): SendDecided['reasons'] {
  const at = refusedBy ? RULES.findIndex((r) => r.name === refusedBy) : RULES.length;
  return RULES.map((rule, index) => {
    if (index < at) return { rule: rule.name, outcome: 'pass' as const, detail: rule.name === 'daily_limit' ? JSON.stringify({ limit: 100000, used: 12, window: '2026-03-10', resets_at: '2026-03-11T00:00:00.000Z' }) : JSON.stringify({ checked: rule.name }) };
    if (index === at) return { rule: rule.name, outcome: 'fail' as const, detail: JSON.stringify({ rule: rule.name, source: 'opt_out', sources: ['opt_out'], suppressed_at: '2026-03-01T09:00:00.000Z' }) };
    return { rule: rule.name, outcome: 'skipped' as const, detail: null };
  });
}

interface Sent {
  account: TestAccount;
  messageId: string;
  recipient?: string;
  at?: number;
  refusedBy?: string;
}

/** A decided send in the policy log, as the policy consumer writes it (toLogRow). */
function entry(sent: Sent): SendDecided {
  const refused = Boolean(sent.refusedBy);
  return decision(`cmd_${sent.messageId}`, {
    event_id: `evt_${sent.messageId}`,
    customer_id: sent.account.customer_id,
    instance_id: sent.account.instance_id,
    message_id: sent.messageId,
    log_id: nextLogId++,
    occurred_at: sent.at ?? Date.now() - 10 * MINUTE,
    recipient: sent.recipient ?? '+14155552671',
    decision: refused ? 'rejected' : 'accepted',
    error_code: refused ? 'recipient_suppressed' : null,
    error_message: refused ? 'The recipient is suppressed for this account.' : null,
    reasons: reasons(sent.refusedBy),
    policy_version: 'policy-test-v1',
    entry_hash: 'f00dfeedcafe0123456789abcdef',
    dispatch: refused ? null : { instance_name: sent.account.instance_name, phone: sent.recipient ?? '+14155552671', text: TEXT },
  });
}

async function decided(...sent: Sent[]): Promise<SendDecided[]> {
  const entries = sent.map(entry);
  await insertEntries(pool(), entries);
  return entries;
}

/** The instance's display name, which the delivery stage puts on its outcome events (the test accounts' dispatch carries it). */
const instanceNameOf = (d: SendDecided) => d.dispatch?.instance_name ?? '';

const outcomeBase = (d: SendDecided, eventId: string) => ({
  event_id: eventId,
  correlation_id: d.correlation_id,
  occurred_at: Date.now() - 8 * MINUTE,
  customer_id: d.customer_id,
  instance_id: d.instance_id,
  message_id: d.message_id,
  log_id: d.log_id,
  recipient: d.recipient,
  message_purpose: d.message_purpose,
  instance_name: instanceNameOf(d),
});
const dispatchedOutcome = (d: SendDecided, provider: string): DeliveryOutcome => ({ type: 'MessageDispatched', payload: { ...outcomeBase(d, `evt_sent_${d.message_id}`), provider_message_id: provider, provider_status: 'PENDING' } });
const failedOutcome = (d: SendDecided): DeliveryOutcome => ({
  type: 'DeliveryFailed',
  payload: { ...outcomeBase(d, `evt_failed_${d.message_id}`), reason: 'unknown_number', detail: 'the number is not on the network', definitive: true },
});

const BATCH: StageBatch = { topic: 'test', partition: 0, nextOffset: 1n, heartbeat: async () => {} };

/**
 * The delivery outcome recorded by the delivery stage, then the gateway event instance-events
 * makes of it (message.sent / message.failed), queued by the webhooks service's enqueue stage.
 * Returns the webhook delivery id.
 */
async function sendOutcome(d: SendDecided, outcome: DeliveryOutcome): Promise<string> {
  await claim(pool(), [taskOf(d, instanceNameOf(d))]);
  await recordOutcomes(pool(), [{ messageId: d.message_id, attempt: 1, outcome, detail: null }]);
  const { runtime } = suite.fixture;
  const records = await mapDeliveryOutcomes(runtime)([{ offset: 0n, event: outcome as never }], BATCH);
  expect(records).toHaveLength(1);
  const event = await runtime.codec.decode({ topic: records[0]!.topic, partition: 0, offset: '0', key: records[0]!.key, value: records[0]!.value, headers: records[0]!.headers ?? {}, timestamp: '0' });
  if (event?.type !== 'GatewayEventEmitted') throw new Error('expected a gateway event');
  await enqueueGatewayEvents(runtime, () => {})([{ offset: 0n, event }], BATCH);
  return deliveryIdFor(event.payload.event_id, d.instance_id);
}

/** A receipt's gateway event (message.delivered / message.read, as instance-events maps a messages.update), queued for the webhook. */
async function receiptWebhook(account: TestAccount, event: string, provider: string, status: string): Promise<string> {
  const eventId = `evt_${event}_${provider}_${Math.random().toString(36).slice(2)}`;
  const id = deliveryIdFor(eventId, account.instance_id);
  const body = JSON.stringify({ event, instance_id: account.instance_id, instance_name: account.instance_name, timestamp: new Date().toISOString(), from: '+14155552671', external_message_id: provider, status });
  await pool().query(sql.typeAlias('void')`
    INSERT INTO webhook_deliveries (delivery_id, event_id, instance_id, customer_id, event, body, occurred_at, state, next_attempt_at)
    VALUES (${id}, ${eventId}, ${account.instance_id}, ${account.customer_id}, ${event}, ${body}, now() - interval '5 minutes', 'pending', now())`);
  return id;
}

async function attempts(deliveryId: string, list: Array<{ status: number | null; error?: string; latency: number; outcome: string }>, state: string) {
  for (const [n, a] of list.entries()) {
    await pool().query(sql.typeAlias('void')`
      INSERT INTO webhook_attempts (delivery_id, attempt, attempted_at, destination_url, status_code, latency_ms, error, outcome, next_attempt_at)
      VALUES (${deliveryId}, ${n + 1}, now() - ${`${7 - n} minutes`}::interval, 'https://93.184.216.34/hooks', ${a.status}, ${a.latency}, ${a.error ?? null}, ${a.outcome},
              ${a.outcome === 'retry' ? sql.fragment`now() + interval '5 minutes'` : null})`);
  }
  await pool().query(sql.typeAlias('void')`UPDATE webhook_deliveries SET state = ${state}, attempts = ${list.length} WHERE delivery_id = ${deliveryId}`);
}

const receipt = (account: TestAccount, provider: string, status: string, minutesAgo: number) =>
  pool().query(sql.typeAlias('void')`
    INSERT INTO message_receipts (instance_id, provider_message_id, status, at) VALUES (${account.instance_id}, ${provider}, ${status}, now() - ${`${minutesAgo} minutes`}::interval)`);

async function webhookEndpoint(account: TestAccount) {
  await pool().query(sql.typeAlias('void')`
    INSERT INTO webhook_endpoints (instance_id, customer_id, destination_url, events, status, signing_secret_enc)
    VALUES (${account.instance_id}, ${account.customer_id}, 'https://93.184.216.34/hooks', ${sql.array(EVENTS, 'text')}, 'active', 'sealed')`);
}

const rowsOf = (html: string) => [...html.matchAll(/<tr data-message-id="([^"]+)">/g)].map((m) => m[1]!);
const rulesOf = (html: string) => [...html.matchAll(/<tr data-rule="([^"]+)" data-outcome="([^"]+)">/g)].map((m) => [m[1]!, m[2]!]);
const stepsOf = (html: string) => [...html.matchAll(/<li class="step [a-z]*" data-step="([^"]+)">\s*<p class="step-head">(?:<time datetime="([^"]+)">)?/g)].map((m) => [m[1]!, m[2] ?? null]);
const deliveryOf = (html: string, id: string) => new RegExp(`<li id="delivery-${id}"[\\s\\S]*?</li>`).exec(html)?.[0] ?? '';

let readMessage: SendDecided;
let failedMessage: SendDecided;
let refusedMessage: SendDecided;
let sendingMessage: SendDecided;
let oldMessage: SendDecided;
let theirMessage: SendDecided;
const webhooks: Record<string, string> = {};

beforeAll(async () => {
  mine = await suite.fixture.account();
  theirs = await suite.fixture.account();
  owner = await memberWithRole(app(), pool(), suite.fixture.box, mine.customer_id, 'owner');
  developer = await memberWithRole(app(), pool(), suite.fixture.box, mine.customer_id, 'developer');
  compliance = await memberWithRole(app(), pool(), suite.fixture.box, mine.customer_id, 'compliance');
  viewer = await memberWithRole(app(), pool(), suite.fixture.box, mine.customer_id, 'viewer');
  stranger = await memberWithRole(app(), pool(), suite.fixture.box, theirs.customer_id, 'owner');
  await webhookEndpoint(mine);
  await webhookEndpoint(theirs);

  const now = Date.now();
  [readMessage, failedMessage, refusedMessage, sendingMessage, oldMessage] = await decided(
    { account: mine, messageId: 'msg_read', recipient: '+14155552671', at: now - 30 * MINUTE },
    { account: mine, messageId: 'msg_failed', recipient: '+442079460958', at: now - 20 * MINUTE },
    { account: mine, messageId: 'msg_refused', recipient: '+14155552671', at: now - 15 * MINUTE, refusedBy: 'recipient_not_suppressed' },
    { account: mine, messageId: 'msg_sending', recipient: '+14155550199', at: now - 5 * MINUTE },
    { account: mine, messageId: 'msg_old', recipient: '+14155552671', at: now - 10 * DAY },
  ) as [SendDecided, SendDecided, SendDecided, SendDecided, SendDecided];
  [theirMessage] = (await decided({ account: theirs, messageId: 'msg_theirs', recipient: '+14155552671', at: now - 12 * MINUTE })) as [SendDecided];

  // Sent, then delivered and read; the webhook told of each (message.sent after a retry).
  webhooks.sent = await sendOutcome(readMessage, dispatchedOutcome(readMessage, 'PROV-READ'));
  // Sent before the receipts came (recordOutcomes stamps now()).
  await pool().query(sql.typeAlias('void')`
    UPDATE deliveries SET created_at = now() - interval '12 minutes', updated_at = now() - interval '11 minutes' WHERE message_id = ${readMessage.message_id}`);
  await attempts(webhooks.sent, [{ status: 503, error: 'http_503', latency: 1500, outcome: 'retry' }, { status: 200, latency: 42, outcome: 'delivered' }], 'delivered');
  await receipt(mine, 'PROV-READ', 'delivered', 9);
  await receipt(mine, 'PROV-READ', 'read', 6);
  webhooks.delivered = await receiptWebhook(mine, 'message.delivered', 'PROV-READ', 'delivered');
  await attempts(webhooks.delivered, [{ status: 204, latency: 30, outcome: 'delivered' }], 'delivered');
  webhooks.read = await receiptWebhook(mine, 'message.read', 'PROV-READ', 'read');
  // Not about this message: another provider id, and an inbound message.
  webhooks.otherReceipt = await receiptWebhook(mine, 'message.delivered', 'PROV-OTHER', 'delivered');
  webhooks.inbound = await receiptWebhook(mine, 'message.received', 'PROV-READ', 'received');
  // Another customer's webhook delivery naming this message id and provider id: never shown here.
  webhooks.strangers = await receiptWebhook(theirs, 'message.delivered', 'PROV-READ', 'delivered');

  // Never sent: the number is not on the network; message.failed names the message (it has no provider id).
  webhooks.failed = await sendOutcome(failedMessage, failedOutcome(failedMessage));
  await attempts(webhooks.failed, [{ status: null, error: 'timeout', latency: 10_000, outcome: 'retry' }], 'pending');

  // Claimed, outcome open: the row keeps the text until then, which the page never shows.
  await claim(pool(), [taskOf(sendingMessage, instanceNameOf(sendingMessage))]);
}, 120_000);

describe('GET /messages', () => {
  it('lists the last 7 days of the customer\'s messages, newest first, with the decision and the delivery now', async () => {
    const page = await owner.client.get('/messages');
    expect(page.status).toBe(200);
    expect(rowsOf(page.html)).toEqual(['msg_sending', 'msg_refused', 'msg_failed', 'msg_read']);
    const row = (id: string) => new RegExp(`<tr data-message-id="${id}">[\\s\\S]*?</tr>`).exec(page.html)![0];
    expect(row('msg_read')).toContain('data-delivery="read">Read<');
    expect(row('msg_read')).toContain('<a href="/messages/msg_read">');
    expect(row('msg_read')).toContain('+14155552671');
    expect(row('msg_read')).toContain('Transactional');
    expect(row('msg_failed')).toContain('Failed: the number is not on the chat network');
    expect(row('msg_refused')).toContain('<code>recipient_suppressed</code> <span class="hint">The recipient is suppressed for this account.</span>');
    expect(row('msg_refused')).toContain('Not sent (refused)');
    expect(row('msg_sending')).toContain('Sending…');
    expect(textOf(page.html, 'results-range')).toMatch(/^Decided in the last 7 days/);
    expect(page.html).not.toContain(TEXT);
  });

  it('searches by phone: the whole number, or some of its digits', async () => {
    expect(rowsOf((await owner.client.get('/messages?phone=%2B1+(415)+555-2671')).html)).toEqual(['msg_refused', 'msg_read']);
    expect(rowsOf((await owner.client.get('/messages?phone=2079')).html)).toEqual(['msg_failed']);
    expect(rowsOf((await owner.client.get('/messages?phone=0199')).html)).toEqual(['msg_sending']);
  });

  it('searches by time range and decision', async () => {
    const from = new Date(Date.now() - 11 * DAY).toISOString().slice(0, 10);
    expect(rowsOf((await owner.client.get(`/messages?from=${from}&phone=2671`)).html)).toEqual(['msg_refused', 'msg_read', 'msg_old']);
    const to = new Date(Date.now() - 9 * DAY).toISOString().slice(0, 16).replace('T', '+');
    expect(rowsOf((await owner.client.get(`/messages?from=${from}&to=${to}`)).html)).toEqual(['msg_old']);
    expect(rowsOf((await owner.client.get('/messages?decision=refused')).html)).toEqual(['msg_refused']);
    expect(rowsOf((await owner.client.get('/messages?decision=accepted')).html)).toEqual(['msg_sending', 'msg_failed', 'msg_read']);
  });

  it('an exact message id or log id that finds one message opens its timeline (any time ago)', async () => {
    const byId = await owner.client.get('/messages?message_id=msg_old');
    expect(byId.status).toBe(303);
    expect(byId.location).toBe('/messages/msg_old');
    const byLog = await owner.client.get(`/messages?log_id=${failedMessage.log_id}`);
    expect(byLog.status).toBe(303);
    expect(byLog.location).toBe('/messages/msg_failed');
    // With a filter that excludes it, nothing is found: no redirect.
    const none = await owner.client.get('/messages?message_id=msg_read&decision=refused');
    expect(none.status).toBe(200);
    expect(textOf(none.html, 'results-empty')).toMatch(/^<strong>No message matches/);
  });

  it('says plainly when nothing matches', async () => {
    const page = await owner.client.get('/messages?message_id=msg_nothing');
    expect(page.status).toBe(200);
    expect(page.html).toContain('No message matches');
    expect(page.html).toContain('clear the search');
    expect(rowsOf(page.html)).toEqual([]);
  });

  it('pages 50 at a time, newest first, keeping the search', async () => {
    const base = Date.now() - 2 * DAY;
    await decided(...Array.from({ length: 55 }, (_, i) => ({ account: mine, messageId: `msg_bulk_${String(i).padStart(2, '0')}`, recipient: `+1212555${String(1000 + i)}`, at: base + i * MINUTE })));
    const first = await owner.client.get('/messages?phone=1212555');
    expect(first.status).toBe(200);
    const firstRows = rowsOf(first.html);
    expect(firstRows).toHaveLength(50);
    expect(firstRows[0]).toBe('msg_bulk_54');
    expect(first.html).toContain('<a href="/messages?phone=1212555&amp;page=2" rel="next">');
    expect(first.html).not.toContain('rel="prev"');
    const second = await owner.client.get('/messages?phone=1212555&page=2');
    expect(rowsOf(second.html)).toEqual(['msg_bulk_04', 'msg_bulk_03', 'msg_bulk_02', 'msg_bulk_01', 'msg_bulk_00']);
    expect(second.html).toContain('<a href="/messages?phone=1212555" rel="prev">');
    expect(second.html).not.toContain('rel="next"');
  });

  it('answers bad input with the form and what is wrong (400), never a 500', async () => {
    for (const [query, words] of [
      ['log_id=abc', 'The log id is a whole number'],
      ['phone=12', 'Type at least 3 digits'],
      ['phone=%3Cscript%3E', 'The phone number may hold digits'],
      ['from=yesterday', 'is not a date and time'],
      ['from=2026-03-05&to=2026-03-01', 'The “from” time is after the “to” time.'],
      ['decision=maybe', 'Choose the decision from the list'],
      ['page=0', 'The page is a number'],
      ['message_id=a%00b', 'contains a NUL character'],
      ['message_id=a&message_id=b', 'given more than once'],
    ] as const) {
      const page = await owner.client.get(`/messages?${query}`);
      expect(page.status, query).toBe(400);
      expect(page.html, query).toContain(words);
      expect(page.html, query).toContain('id="search-errors"');
      expect(page.html, query).toContain('<form method="get" action="/messages"');
    }
  });
});

describe('GET /messages/:messageId', () => {
  it('shows the decision with every rule, in order, each with what it checks and its details', async () => {
    const page = await owner.client.get('/messages/msg_read');
    expect(page.status).toBe(200);
    expect(rulesOf(page.html)).toEqual(RULES.map((r) => [r.name, 'pass']));
    expect(textOf(page.html, 'message-log-id')).toBe(String(readMessage.log_id));
    expect(textOf(page.html, 'message-recipient')).toBe('+14155552671');
    expect(textOf(page.html, 'message-instance')).toBe(mine.instance_name);
    expect(textOf(page.html, 'message-entry-hash')).toBe('f00dfeedcafe');
    expect(page.html).toContain('policy-test-v1');
    // Details in words, and what the rule checks (describeRules).
    const daily = new RegExp('<tr data-rule="daily_limit"[\\s\\S]*?</tr>').exec(page.html)![0];
    expect(daily).toContain('<span class="hint">Resets at:</span> 2026-03-11 00:00:00 UTC');
    expect(daily).toContain('<span class="hint">Limit:</span> 100,000');
    expect(daily).toContain(RULES.find((r) => r.name === 'daily_limit')!.summary);
    expect(textOf(page.html, 'message-text-note')).toMatch(/^Not shown: the gateway does not keep the text/);
    expect(page.html).not.toContain(TEXT);
  });

  it('shows sent, then delivered, then read, with their times', async () => {
    const page = await developer.client.get('/messages/msg_read');
    expect(page.status).toBe(200);
    const steps = stepsOf(page.html);
    expect(steps.map(([key]) => key)).toEqual(['decided', 'sending', 'sent', 'receipt-delivered', 'receipt-read']);
    expect(steps.every(([, at]) => at !== null)).toBe(true);
    const times = steps.map(([, at]) => Date.parse(at!));
    expect(times).toEqual([...times].sort((a, b) => a - b));
    expect(page.html).toContain('Delivered to the recipient’s phone');
    expect(page.html).toContain('Read by the recipient');
    expect(page.html).toContain('PROV-READ');
    expect(page.html).toContain('data-delivery="read">Read<');
  });

  it('lists each webhook delivery about the message, with every attempt in order, and links to the webhook tab', async () => {
    const page = await owner.client.get('/messages/msg_read');
    const ids = [...page.html.matchAll(/<li id="delivery-([^"]+)" data-event="([^"]+)">/g)].map((m) => [m[1], m[2]]);
    expect(ids).toEqual(expect.arrayContaining([
      [webhooks.sent, 'message.sent'],
      [webhooks.delivered, 'message.delivered'],
      [webhooks.read, 'message.read'],
    ]));
    expect(ids).toHaveLength(3);
    const sent = deliveryOf(page.html, webhooks.sent!);
    expect([...sent.matchAll(/<tr data-attempt="(\d+)">/g)].map((m) => m[1])).toEqual(['1', '2']);
    expect(sent).toContain('HTTP 503');
    expect(sent).toContain('http_503');
    expect(sent).toContain('1,500 ms');
    expect(sent).toContain('retry scheduled');
    expect(sent).toContain('HTTP 200');
    expect(sent).toContain('42 ms');
    expect(deliveryOf(page.html, webhooks.read!)).toContain('No attempt yet');
    expect(page.html).toContain(`<a href="/instances/${mine.instance_id}/manage?tab=webhook">Resend a delivery`);
    // Compliance may read it, not resend: the link says so.
    const asCompliance = await compliance.client.get('/messages/msg_read');
    expect(asCompliance.status).toBe(200);
    expect(asCompliance.html).toContain(`<a href="/instances/${mine.instance_id}/manage?tab=webhook">See every delivery`);
  });

  it('a failed send: why, and the message.failed webhook found by its message_id', async () => {
    const page = await owner.client.get('/messages/msg_failed');
    expect(page.status).toBe(200);
    expect(stepsOf(page.html).map(([key]) => key)).toEqual(['decided', 'sending', 'failed']);
    expect(page.html).toContain('Failed: the number is not on the chat network');
    expect(page.html).toContain('Recorded: the number is not on the network.');
    const failed = deliveryOf(page.html, webhooks.failed!);
    expect(failed).toContain('data-event="message.failed"');
    expect(failed).toContain('no answer');
    expect(failed).toContain('timeout');
  });

  it('a refused message: the code and message, the rule that refused, the rest not checked, and "not sent"', async () => {
    const page = await owner.client.get('/messages/msg_refused');
    expect(page.status).toBe(200);
    const at = RULES.findIndex((r) => r.name === 'recipient_not_suppressed');
    expect(rulesOf(page.html)).toEqual(RULES.map((r, i) => [r.name, i < at ? 'pass' : i === at ? 'fail' : 'skipped']));
    expect(textOf(page.html, 'message-error-code')).toBe('recipient_suppressed');
    expect(page.html).toContain('Not sent: refused by policy');
    const failing = new RegExp('<tr data-rule="recipient_not_suppressed"[\\s\\S]*?</tr>').exec(page.html)![0];
    expect(failing).toContain('Refused the message');
    expect(failing).toContain('<span class="hint">Suppressed at:</span> 2026-03-01 09:00:00 UTC');
    expect(failing).toContain('<span class="hint">Source:</span> opt out');
    expect(page.html).toContain('id="webhooks-empty"');
  });

  it('a send under way says so, and never shows the text the delivery row keeps meanwhile', async () => {
    const page = await owner.client.get('/messages/msg_sending');
    expect(page.status).toBe(200);
    expect(stepsOf(page.html).map(([key, at]) => [key, at === null])).toEqual([['decided', false], ['sending', false], ['waiting', true]]);
    expect(page.html).toContain('Sending…');
    expect(page.html).not.toContain(TEXT);
  });

  it('answers 404 for an unknown id, and for another customer\'s message, alike', async () => {
    for (const id of ['no-such-message', 'msg_theirs', 'a%00b']) {
      const page = await owner.client.get(`/messages/${id}`);
      expect(page.status, id).toBe(404);
      expect(page.html, id).toContain('No such message');
    }
  });
});

describe('tenant isolation', () => {
  it('another customer\'s member finds none of these messages, and sees only their own', async () => {
    expect(rowsOf((await stranger.client.get('/messages')).html)).toEqual(['msg_theirs']);
    expect(rowsOf((await stranger.client.get('/messages?phone=2671')).html)).toEqual(['msg_theirs']);
    const byId = await stranger.client.get('/messages?message_id=msg_read');
    expect(byId.status).toBe(200);
    expect(rowsOf(byId.html)).toEqual([]);
    expect((await stranger.client.get(`/messages?log_id=${readMessage.log_id}`)).status).toBe(200);
    for (const id of ['msg_read', 'msg_failed', 'msg_refused']) expect((await stranger.client.get(`/messages/${id}`)).status, id).toBe(404);
    // Their own timeline names none of this customer's webhook deliveries, though one of theirs names this provider id.
    const own = await stranger.client.get(`/messages/${theirMessage.message_id}`);
    expect(own.status).toBe(200);
    expect(own.html).not.toContain(webhooks.sent!);
    expect((await owner.client.get('/messages/msg_read')).html).not.toContain(webhooks.strangers!);
  });
});

describe('roles', () => {
  it('a viewer may not read messages (403)', async () => {
    for (const url of ['/messages', '/messages/msg_read', '/messages?message_id=msg_read']) {
      const page = await viewer.client.get(url);
      expect(page.status, url).toBe(403);
      expect(page.html).not.toContain('+14155552671');
    }
  });

  it('owners, developers and compliance may', async () => {
    for (const who of [owner, developer, compliance]) expect((await who.client.get('/messages')).status).toBe(200);
  });
});

describe('the webhook lookups', () => {
  it('use the expression indexes of migration 1700000001700, not a scan', async () => {
    const lookup = webhookDeliveryIds(mine.customer_id, 'msg_read', { instance_id: mine.instance_id, provider_message_id: 'PROV-READ' });
    // The tables here are tiny, where a scan is cheapest: forbid it, so the plan shows which indexes fit.
    const plan = await pool().transaction(async (t) => {
      await t.query(sql.typeAlias('void')`SET LOCAL enable_seqscan = off`);
      return t.anyFirst(sql.type(z.object({ 'QUERY PLAN': z.string() }))`EXPLAIN ${lookup}`);
    });
    const text = plan.join('\n');
    expect(text).toContain('webhook_deliveries_message_idx');
    expect(text).toContain('webhook_deliveries_external_message_idx');
    expect(text).not.toMatch(/Seq Scan/);
  });
});
