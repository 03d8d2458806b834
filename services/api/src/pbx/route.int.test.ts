import { createHmac, randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql, z } from '@gw/db';
import type { PbxEventReceived, SendRequested } from '@gw/events';
import { createPbx, disablePbx, rotatePbxSecret } from '@gw/accounts';
import { accepted, decision, NO_ANSWER, rejected } from '../../../../test/support/api/fake-replies.ts';
import { until, useApiFixture, type TestAccount } from '../../../../test/support/api/api-fixture.ts';
import { PBX_BODY_LIMIT } from './route.ts';

// POST /integrations/pbx/webhook/{integration_id} in-process, over real Postgres, Kafka and the
// registry; the reply router is a fake that answers what each test needs.
const suite = useApiFixture();

interface Target {
  id: number | string;
  secret?: string;
  signing?: string;
}

interface PostOptions {
  secret?: string | null;
  timestamp?: string;
  signature?: string;
  sign?: { secret: string; timestamp: number; bare?: boolean };
  /** The app posted to (default: the fixture's, with the configuration's PBX_RECENT_READ_MS, 0). */
  app?: FastifyInstance;
}

const now = () => Math.floor(Date.now() / 1000);
const sign = (secret: string, timestamp: number | string, raw: string) => createHmac('sha256', secret).update(`${timestamp}.${raw}`).digest('hex');

async function post(target: Target, body: unknown, options: PostOptions = {}) {
  const raw = typeof body === 'string' ? body : JSON.stringify(body);
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  const secret = options.secret === undefined ? target.secret : options.secret;
  if (secret) headers['x-chat-gateway-pbx-secret'] = secret;
  if (options.sign) {
    const hex = sign(options.sign.secret, options.sign.timestamp, raw);
    headers['x-chat-gateway-timestamp'] = String(options.sign.timestamp);
    headers['x-chat-gateway-signature'] = options.sign.bare ? hex : `sha256=${hex}`;
  }
  if (options.timestamp) headers['x-chat-gateway-timestamp'] = options.timestamp;
  if (options.signature) headers['x-chat-gateway-signature'] = options.signature;
  const response = await (options.app ?? suite.fixture.app).inject({ method: 'POST', url: `/integrations/pbx/webhook/${target.id}`, headers, payload: raw });
  return { status: response.statusCode, body: response.json() };
}

/**
 * The PBX module switch as the policy engine folds it into policy_state (not running here): the
 * route reads that projection for events that send nothing.
 */
async function pbxModule(customerId: string, on: boolean): Promise<void> {
  await suite.fixture.runtime.pool.query(sql.typeAlias('void')`
    INSERT INTO policy_state (customer_id, state) VALUES (${customerId}, ${sql.json({ modules: { pbx: on } })})
    ON CONFLICT (customer_id) DO UPDATE SET state = EXCLUDED.state`);
}

/** A demo account with its module switch folded, and its PBX integration. */
async function pbxAccount(options: { pbxHmac?: boolean; module?: boolean } = {}): Promise<{ account: TestAccount; target: Target }> {
  const account = await suite.fixture.account({ pbxHmac: options.pbxHmac ?? false });
  if (options.module !== false) await pbxModule(account.customer_id, true);
  return { account, target: { id: account.pbx_integration_id, secret: account.pbx_secret, signing: account.pbx_signing_secret } };
}

async function integration(account: TestAccount, options: { hmac?: boolean; ratePerMinute?: number } = {}): Promise<Target> {
  const created = await createPbx(suite.fixture.runtime.pool, suite.fixture.box, {
    customerId: account.customer_id,
    instanceId: account.instance_id,
    hmac: options.hmac ?? false,
    ratePerMinute: options.ratePerMinute,
    baseUrl: 'https://gateway.test',
  });
  return { id: created.pbx_integration_id, secret: created.pbx_secret, signing: created.pbx_signing_secret };
}

const lastWait = () => suite.fixture.replies.calls.at(-1)!;
const received = (integrationId: number | string) =>
  suite.fixture.records.filter((r) => r.event.type === 'PbxEventReceived' && r.event.payload.integration_id === integrationId).map((r) => r.event.payload as PbxEventReceived);
const commands = (commandId: string) =>
  suite.fixture.records.filter((r) => r.event.type === 'SendRequested' && r.event.payload.correlation_id === commandId).map((r) => r.event.payload as SendRequested);

/** Every record of the customer appended so far has been read once a later event of it is (one partition, in order). */
async function afterLaterEvent(target: Target): Promise<void> {
  const marker = `barrier-${randomUUID()}`;
  const answer = await post(target, { event_type: 'call_started', conversation_id: marker }, target.signing ? { sign: { secret: target.signing, timestamp: now() } } : {});
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  await suite.fixture.record((r) => r.event.type === 'PbxEventReceived' && r.event.payload.payload.includes(marker), 'the barrier event');
}

const StoredResponse = z.object({ command_id: z.string(), response: z.unknown() });
const storedRequests = (integrationId: number | string) =>
  suite.fixture.runtime.pool.any(sql.type(StoredResponse)`SELECT command_id, response FROM pbx_requests WHERE integration_id = ${Number(integrationId)} ORDER BY created_at`);

const UNAUTHENTICATED = { success: false, error: 'invalid_pbx_webhook', message: 'The PBX webhook request could not be authenticated.', details: {} };

describe('PBX webhook: events that send nothing', () => {
  it('200 for a test event: acknowledged, recorded as received, its answer kept for retries', async () => {
    const { account, target } = await pbxAccount();
    const raw = JSON.stringify({ event_type: 'test', note: 'hello' });
    const waits = suite.fixture.replies.calls.length;
    const answer = await post(target, raw);
    const expected = { success: true, status: 'processed', event_type: 'test', action: 'received' };
    expect(answer).toEqual({ status: 200, body: expected });
    expect(suite.fixture.replies.calls.length).toBe(waits);

    const record = await suite.fixture.record((r) => r.event.type === 'PbxEventReceived' && r.event.payload.integration_id === target.id, 'the PBX event');
    expect(record.key).toBe(account.customer_id);
    expect(record.event.payload).toEqual({
      event_id: expect.any(String),
      correlation_id: expect.stringMatching(/^cmd_/),
      occurred_at: expect.any(Number),
      customer_id: account.customer_id,
      instance_id: account.instance_id,
      integration_id: target.id,
      event_type: 'test',
      payload: raw,
      action: 'acknowledge',
    });
    expect(await storedRequests(target.id)).toEqual([{ command_id: record.event.payload.correlation_id, response: { status: 200, body: expected } }]);
  });

  it('a call event without a template is recorded only', async () => {
    const { target } = await pbxAccount();
    const answer = await post(target, { event_type: 'call_started', customer_phone: '+14155550102', agent_extension: '204' });
    expect(answer).toEqual({ status: 200, body: { success: true, status: 'processed', event_type: 'call_started', action: 'received' } });
    const record = await suite.fixture.record((r) => r.event.type === 'PbxEventReceived' && r.event.payload.integration_id === target.id, 'the PBX event');
    expect(record.event.payload).toMatchObject({ event_type: 'call_started', action: 'record' });
  });

  it('403 module_not_enabled while the PBX module is off (or never folded); nothing appended', async () => {
    const { account, target } = await pbxAccount({ module: false });
    const OFF = { status: 403, body: { success: false, error: 'module_not_enabled', message: 'The PBX module is not enabled for this account.', details: { module: 'pbx' } } };
    expect(await post(target, { event_type: 'test', n: 1 })).toEqual(OFF);
    await pbxModule(account.customer_id, false);
    expect(await post(target, { event_type: 'test', n: 2 })).toEqual(OFF);
    await pbxModule(account.customer_id, true);
    await afterLaterEvent(target);
    expect(received(target.id).map((e) => e.event_type)).toEqual(['call_started']);
  });
});

describe('PBX webhook: events that send', () => {
  it('outbound_message: appends the event and its send in order, answers with the decided message; a retry replays the answer', async () => {
    const { account, target } = await pbxAccount();
    suite.fixture.replies.answerWith(accepted);
    const event = { event_type: 'outbound_message', to: '+1 415 555 0101', message_text: 'Your ticket 77 was updated.', external_message_id: `ext-${randomUUID()}` };
    const first = await post(target, event);
    const { commandId, options } = lastWait();
    expect(first).toEqual({ status: 200, body: { success: true, status: 'processed', event_type: 'outbound_message', action: 'received', message_id: `msg_of_${commandId}` } });
    expect(options).toEqual({ until: 'decision', checkStoreFirst: false });

    const send = await suite.fixture.record((r) => r.event.type === 'SendRequested' && r.event.payload.correlation_id === commandId, 'the send');
    const sendAt = suite.fixture.records.indexOf(send);
    const event0 = suite.fixture.records.findIndex((r) => r.event.type === 'PbxEventReceived' && r.event.payload.correlation_id === commandId);
    expect(event0).toBeGreaterThanOrEqual(0);
    expect(event0).toBeLessThan(sendAt);
    expect(suite.fixture.records[event0]!.event.payload).toMatchObject({ action: 'send', event_type: 'outbound_message', payload: JSON.stringify(event) });
    expect(send.event.payload).toEqual({
      event_id: expect.any(String),
      correlation_id: commandId,
      occurred_at: expect.any(Number),
      customer_id: account.customer_id,
      instance_id: account.instance_id,
      instance_name: expect.any(String),
      message_id: expect.stringMatching(/^msg_/),
      phone: '+14155550101',
      message: 'Your ticket 77 was updated.',
      message_purpose: 'support',
      source: 'pbx',
      idempotency_key: `ext:${event.external_message_id}`,
    });

    const waits = suite.fixture.replies.calls.length;
    expect(await post(target, event)).toEqual(first);
    expect(suite.fixture.replies.calls.length).toBe(waits);
    await afterLaterEvent(target);
    expect(commands(commandId)).toHaveLength(1);
    expect(received(target.id).filter((e) => e.correlation_id === commandId)).toHaveLength(1);
  });

  it('missed_call sends the integration\'s template to customer_phone, with the purpose asked for', async () => {
    const { target } = await pbxAccount();
    suite.fixture.replies.answerWith(accepted);
    const answer = await post(target, { event_type: 'missed_call', customer_phone: '+14155550102', call_time: '14:05', message_purpose: 'operational' });
    const { commandId } = lastWait();
    expect(answer).toMatchObject({ status: 200, body: { message_id: `msg_of_${commandId}` } });
    const send = await suite.fixture.record((r) => r.event.type === 'SendRequested' && r.event.payload.correlation_id === commandId, 'the send');
    expect(send.event.payload).toMatchObject({
      phone: '+14155550102',
      message: 'Sorry we missed your call at 14:05. We will call you back as soon as we can.',
      message_purpose: 'operational',
      source: 'pbx',
    });
  });

  it('a policy refusal is 403 with the policy\'s code; one that is not a 403 code is policy_violation naming it', async () => {
    const { target } = await pbxAccount();
    suite.fixture.replies.answerWith(rejected('recipient_suppressed', 'This recipient has opted out.', { rule: 'recipient_not_suppressed', source: 'manual' }));
    const refused = await post(target, { event_type: 'missed_call', customer_phone: '+14155550199', call_time: '09:00' });
    const { commandId } = lastWait();
    expect(refused).toEqual({
      status: 403,
      body: {
        success: false,
        error: 'recipient_suppressed',
        message: 'This recipient has opted out.',
        details: { rule: 'recipient_not_suppressed', source: 'manual', message_id: `msg_of_${commandId}`, log_id: 7001, policy_error: 'recipient_suppressed' },
      },
    });
    expect((await storedRequests(target.id)).at(-1)).toEqual({ command_id: commandId, response: { status: 403, body: refused.body } });

    suite.fixture.replies.answerWith(rejected('daily_message_limit_exceeded', 'The daily message limit is reached.', { rule: 'daily_limit' }));
    const limited = await post(target, { event_type: 'outbound_message', to: '+14155550198', message_text: 'Your ticket was closed.' });
    expect(limited).toMatchObject({ status: 403, body: { success: false, error: 'policy_violation', details: { rule: 'daily_limit', policy_error: 'daily_message_limit_exceeded' } } });
  });

  it('a refusal whose failed rule has details that are not JSON is still a 403, naming the rule (the send path\'s one parser)', async () => {
    const { target } = await pbxAccount();
    suite.fixture.replies.answerWith((call) => ({
      decision: decision(call.commandId, { decision: 'rejected', error_code: 'policy_violation', error_message: 'Blocked.', reasons: [{ rule: 'content_rule', outcome: 'fail', detail: 'not json {' }] }),
      delivery: null,
    }));
    const refused = await post(target, { event_type: 'outbound_message', to: '+14155550197', message_text: 'Your ticket was closed.' });
    const { commandId } = lastWait();
    expect(refused).toMatchObject({ status: 403, body: { success: false, error: 'policy_violation', details: { rule: 'content_rule', message_id: `msg_of_${commandId}`, log_id: 7001, policy_error: 'policy_violation' } } });
  });

  it('no decision by the deadline: 500, and the same event retried waits on the same command without appending it again', async () => {
    const { target } = await pbxAccount();
    suite.fixture.replies.answerWith(NO_ANSWER);
    const event = { event_type: 'outbound_message', to: '+14155550110', message_text: 'Your visit is confirmed.', external_message_id: `ext-${randomUUID()}` };
    expect(await post(target, event)).toEqual({
      status: 500,
      body: { success: false, error: 'internal_error', message: 'The event was recorded but its message is not decided yet. Retry the same event to get its outcome.', details: { state: 'pending_decision' } },
    });
    const { commandId } = lastWait();
    suite.fixture.replies.answerWith(accepted);
    const retry = await post(target, event);
    expect(retry).toEqual({ status: 200, body: { success: true, status: 'processed', event_type: 'outbound_message', action: 'received', message_id: `msg_of_${commandId}` } });
    expect(lastWait()).toMatchObject({ commandId, options: { until: 'decision', checkStoreFirst: true } });
    await afterLaterEvent(target);
    expect(commands(commandId)).toHaveLength(1);
  });

  it('without external_message_id, the same signed body re-sent inside the window is answered as the first', async () => {
    const { target } = await pbxAccount({ pbxHmac: true });
    suite.fixture.replies.answerWith(accepted);
    const event = { event_type: 'outbound_message', to: '+14155550103', message_text: 'Your appointment is confirmed for Monday.' };
    const first = await post(target, event, { sign: { secret: target.signing!, timestamp: now() } });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    const { commandId } = lastWait();
    // The PBX retries: the same body with a fresh timestamp, so a new signature.
    const retry = await post(target, event, { sign: { secret: target.signing!, timestamp: now() + 1 } });
    expect(retry).toEqual(first);
    await afterLaterEvent(target);
    expect(commands(commandId)).toHaveLength(1);
  });
});

describe('PBX webhook: integrations read on every request by default', () => {
  it('a rotated secret is refused at once, and a disabled integration too', async () => {
    const { target } = await pbxAccount({ pbxHmac: true });
    const signed = (t: Target, n: string) => post(t, { event_type: 'test', n }, { sign: { secret: t.signing!, timestamp: now() } });
    expect(await signed(target, 'before')).toMatchObject({ status: 200 });
    const rotated = await rotatePbxSecret(suite.fixture.runtime.pool, suite.fixture.box, Number(target.id), undefined);
    expect(await signed(target, 'old, right after')).toEqual({ status: 401, body: UNAUTHENTICATED });
    const fresh = { id: target.id, secret: rotated.pbx_secret, signing: rotated.pbx_signing_secret };
    expect(await signed(fresh, 'new')).toMatchObject({ status: 200 });
    await disablePbx(suite.fixture.runtime.pool, Number(target.id));
    expect(await signed(fresh, 'disabled, right after')).toEqual({ status: 401, body: UNAUTHENTICATED });
  });
});

describe('PBX webhook: an integration read a moment ago (PBX_RECENT_READ_MS set)', () => {
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  const PBX_RECENT_READ_MS = 1_000;
  let app: FastifyInstance;
  beforeAll(async () => {
    app = await suite.fixture.build({ pbxRecentReadMs: PBX_RECENT_READ_MS });
  });
  afterAll(async () => {
    await app?.close();
  });

  it('a rotated secret works at once; the old one stops within the recent-read bound however busy the integration', async () => {
    const { target } = await pbxAccount({ pbxHmac: true });
    const signed = (t: Target, n: number | string) => post(t, { event_type: 'test', n }, { sign: { secret: t.signing!, timestamp: now() }, app });
    expect(await signed(target, 'before')).toMatchObject({ status: 200 });
    const rotated = await rotatePbxSecret(suite.fixture.runtime.pool, suite.fixture.box, Number(target.id), undefined);
    const fresh = { id: target.id, secret: rotated.pbx_secret, signing: rotated.pbx_signing_secret };
    expect(await signed(fresh, 'new at once')).toMatchObject({ status: 200 });
    // The old secret, used all the while: each use must not keep it alive past the bound.
    const until = Date.now() + PBX_RECENT_READ_MS + 200;
    let old = await signed(target, 'old-0');
    for (let i = 1; Date.now() < until; i++) {
      await sleep(50);
      old = await signed(target, `old-${i}`);
    }
    expect(old).toEqual({ status: 401, body: UNAUTHENTICATED });
    expect(await signed(fresh, 'new after')).toMatchObject({ status: 200 });
  });

  it('a disabled integration is refused within the recent-read bound', async () => {
    const { target } = await pbxAccount();
    expect(await post(target, { event_type: 'test', n: 1 }, { app })).toMatchObject({ status: 200 });
    await disablePbx(suite.fixture.runtime.pool, Number(target.id));
    await sleep(PBX_RECENT_READ_MS + 50);
    expect(await post(target, { event_type: 'test', n: 2 }, { app })).toEqual({ status: 401, body: UNAUTHENTICATED });
  });

  it('a body claim older than the replay window is taken as a new event, in one statement with no clean-up before it', async () => {
    const { target } = await pbxAccount();
    const raw = JSON.stringify({ event_type: 'call_ended', note: 'same body' });
    expect(await post(target, raw)).toMatchObject({ status: 200 });
    const [first] = await storedRequests(target.id);
    // Aged past the window (300 s in the fixture); housekeeping is not what makes it new.
    await suite.fixture.runtime.pool.query(sql.typeAlias('void')`
      UPDATE pbx_requests SET created_at = now() - interval '1 hour' WHERE integration_id = ${Number(target.id)}`);
    expect(await post(target, raw)).toMatchObject({ status: 200 });
    const after = await storedRequests(target.id);
    expect(after).toHaveLength(1);
    expect(after[0]!.command_id).not.toBe(first!.command_id);
    await afterLaterEvent(target);
    expect(received(target.id).filter((e) => e.payload === raw).map((e) => e.correlation_id)).toEqual([first!.command_id, after[0]!.command_id]);
  });
});

describe('PBX webhook: authentication', () => {
  it('401 invalid_pbx_webhook, one answer for an unknown or malformed id, a wrong or missing secret and a disabled integration', async () => {
    const { account, target } = await pbxAccount();
    const disabled = await integration(account);
    await disablePbx(suite.fixture.runtime.pool, Number(disabled.id));
    const answers = [
      await post({ id: 999_999 }, { event_type: 'test' }, { secret: account.pbx_secret }),
      await post(target, { event_type: 'test' }, { secret: 'pbx_wrong' }),
      await post(target, { event_type: 'test' }, { secret: null }),
      await post({ id: 'abc' }, { event_type: 'test' }, { secret: account.pbx_secret }),
      await post({ id: '1234567890' }, { event_type: 'test' }, { secret: account.pbx_secret }),
      await post(disabled, { event_type: 'test' }),
    ];
    for (const answer of answers) expect(answer).toEqual({ status: 401, body: UNAUTHENTICATED });
    await afterLaterEvent(target);
    expect(received(target.id).map((e) => e.event_type)).toEqual(['call_started']);
    expect(received(disabled.id)).toEqual([]);
  });

  it('with HMAC: a signing secret sealed before it was bound to its integration (v3, no use) still verifies', async () => {
    const { target } = await pbxAccount({ pbxHmac: true });
    await suite.fixture.runtime.pool.query(sql.typeAlias('void')`UPDATE pbx_integrations SET hmac_secret_enc = ${suite.fixture.box.seal(target.signing!)} WHERE id = ${Number(target.id)}`);
    expect(await post(target, { event_type: 'test', n: 1 }, { sign: { secret: target.signing!, timestamp: now() } })).toMatchObject({ status: 200 });
    expect(await post(target, { event_type: 'test', n: 2 }, { sign: { secret: 'not-the-secret', timestamp: now() } })).toMatchObject({ status: 401 });
  });

  it('with HMAC: both signature forms accepted inside the window; missing, malformed, wrong, stale, future and replayed refused alike', async () => {
    const { target } = await pbxAccount({ pbxHmac: true });
    const secret = target.signing!;
    expect(await post(target, { event_type: 'test', n: 1 }, { sign: { secret, timestamp: now() } })).toMatchObject({ status: 200 });
    expect(await post(target, { event_type: 'test', n: 2 }, { sign: { secret, timestamp: now(), bare: true } })).toMatchObject({ status: 200 });
    expect(await post(target, { event_type: 'test', n: 3 }, { sign: { secret, timestamp: now() - 280 } })).toMatchObject({ status: 200 });

    const refusals = [
      await post(target, { event_type: 'test', n: 4 }),
      await post(target, { event_type: 'test', n: 5 }, { timestamp: String(now()), signature: 'sha256=nothex' }),
      await post(target, { event_type: 'test', n: 6 }, { sign: { secret: 'not-the-secret', timestamp: now() } }),
      await post(target, { event_type: 'test', n: 7 }, { sign: { secret, timestamp: now() - 320 } }),
      await post(target, { event_type: 'test', n: 8 }, { sign: { secret, timestamp: now() + 320 } }),
      await post(target, { event_type: 'test', n: 9 }, { signature: `sha256=${'a'.repeat(64)}` }),
      await post(target, { event_type: 'test', n: 10 }, { secret: null, sign: { secret, timestamp: now() } }),
    ];
    for (const refusal of refusals) expect(refusal).toEqual({ status: 401, body: UNAUTHENTICATED });

    const ts = now();
    const raw = JSON.stringify({ event_type: 'test', n: 11 });
    const signature = `sha256=${sign(secret, ts, raw)}`;
    expect(await post(target, raw, { timestamp: String(ts), signature })).toMatchObject({ status: 200 });
    expect(await post(target, raw, { timestamp: String(ts), signature })).toEqual({ status: 401, body: UNAUTHENTICATED });
    // The same signature in upper case is the same signature.
    expect(await post(target, raw, { timestamp: String(ts), signature: signature.toUpperCase().replace('SHA256=', '') })).toEqual({ status: 401, body: UNAUTHENTICATED });
    const used = await suite.fixture.runtime.pool.anyFirst(sql.type(z.object({ signature: z.string() }))`SELECT signature FROM pbx_signatures_used WHERE integration_id = ${Number(target.id)}`);
    expect(used).toContain(signature.slice('sha256='.length));
  });
});

describe('PBX webhook: request checks', () => {
  it('429 webhook_rate_limited past the integration\'s rate', async () => {
    const { account } = await pbxAccount();
    const limited = await integration(account, { ratePerMinute: 2 });
    expect((await post(limited, { event_type: 'test', n: 1 })).status).toBe(200);
    expect((await post(limited, { event_type: 'test', n: 2 })).status).toBe(200);
    expect(await post(limited, { event_type: 'test', n: 3 })).toEqual({
      status: 429,
      body: { success: false, error: 'webhook_rate_limited', message: 'Too many PBX events for this integration; slow down.', details: { limit_per_minute: 2 } },
    });
  });

  it('400 for invalid JSON, an invalid payload naming the field, missing_phone and missing_message_text; nothing appended', async () => {
    const { target } = await pbxAccount();
    expect(await post(target, '{"event_type":')).toEqual({ status: 400, body: { success: false, error: 'invalid_json', message: 'The request body is not valid JSON.', details: {} } });
    expect(await post(target, { event_type: 'fax_received' })).toMatchObject({ status: 400, body: { success: false, error: 'validation_error', details: { field: 'event_type', rule: 'enum' } } });
    expect(await post(target, { event_type: 'outbound_message', to: 14155550100, message_text: 'x' })).toMatchObject({ status: 400, body: { error: 'validation_error', details: { field: 'to', rule: 'type' } } });
    expect(await post(target, { to: '+14155550100' })).toMatchObject({ status: 400, body: { error: 'validation_error', details: { field: 'event_type', rule: 'required' } } });
    expect(await post(target, { event_type: 'test', note: 'a\u0000b' })).toEqual({
      status: 400,
      body: { success: false, error: 'validation_error', message: 'Invalid PBX event: note contains a NUL character.', details: { field: 'note', rule: 'safe_text' } },
    });
    expect(await post(target, { event_type: 'outbound_message', message_text: 'hello' })).toEqual({
      status: 400,
      body: { success: false, error: 'missing_phone', message: 'This event sends a message and needs "to".', details: { field: 'to' } },
    });
    expect(await post(target, { event_type: 'missed_call' })).toEqual({
      status: 400,
      body: { success: false, error: 'missing_phone', message: 'This event sends a message and needs "customer_phone".', details: { field: 'customer_phone' } },
    });
    expect(await post(target, { event_type: 'outbound_message', to: '+14155550100' })).toEqual({
      status: 400,
      body: { success: false, error: 'missing_message_text', message: 'outbound_message needs "message_text".', details: { field: 'message_text' } },
    });
    expect(await post(target, { event_type: 'outbound_message', to: 'call me', message_text: 'hello' })).toEqual({
      status: 400,
      body: { success: false, error: 'validation_error', message: 'to must be a phone number in international format.', details: { field: 'to', rule: 'international_format' } },
    });
    await afterLaterEvent(target);
    expect(received(target.id).map((e) => e.event_type)).toEqual(['call_started']);
  });

  it('413 payload_too_large for 256 KB + 1 byte, checked before the secret', async () => {
    const { target } = await pbxAccount();
    const big = JSON.stringify({ event_type: 'test', pad: 'x'.repeat(PBX_BODY_LIMIT) }).slice(0, PBX_BODY_LIMIT + 1);
    expect(big.length).toBe(PBX_BODY_LIMIT + 1);
    const TOO_LARGE = { status: 413, body: { success: false, error: 'payload_too_large', message: 'The request body is too large.', details: {} } };
    expect(await post(target, big)).toEqual(TOO_LARGE);
    expect(await post(target, big, { secret: null })).toEqual(TOO_LARGE);
    // At the limit it is read (and refused as JSON, having been cut).
    expect(await post(target, big.slice(0, PBX_BODY_LIMIT))).toMatchObject({ status: 400, body: { error: 'invalid_json' } });
  });

  it('waits are bounded by the configured deadline', async () => {
    const { target } = await pbxAccount();
    suite.fixture.replies.answerWith(accepted);
    await post(target, { event_type: 'voicemail', customer_phone: '+14155550120' });
    expect(lastWait().deadlineMs).toBe(suite.fixture.runtime.config.api.sendDeadlineMs);
    await until(() => commands(lastWait().commandId).length === 1, 15_000, 'the voicemail send');
  });
});
