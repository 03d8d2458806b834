import { createHmac } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { describe, expect, it } from 'vitest';
import { createPbx, disablePbx } from '@gw/accounts';
import { suppress, toggleModules } from '../../services/gatewayctl/src/policy/commands.ts';
import { sql, z } from '@gw/db';
import { PolicyLogRow } from '@gw/policy-log';
import { SecretBox } from '@gw/security';
import { demoAccount, withOperator, type DemoAccount } from '../support/accounts.ts';
import { until, useStack } from '../support/suite.ts';

const suite = useStack();

interface Integration {
  id: number;
  secret: string;
  signing?: string;
}

async function integration(account: DemoAccount, options: { hmac?: boolean; ratePerMinute?: number } = {}): Promise<Integration> {
  const created = await withOperator(suite.stack, ({ pool }) =>
    createPbx(pool, new SecretBox(suite.stack.env.GATEWAY_SECRET_KEY!), {
      customerId: account.customer_id,
      instanceId: account.instance_id,
      hmac: options.hmac ?? false,
      ratePerMinute: options.ratePerMinute,
      baseUrl: suite.stack.apiUrl,
    }),
  );
  return { id: created.pbx_integration_id, secret: created.pbx_secret, signing: created.pbx_signing_secret };
}

interface PostOptions {
  secret?: string | null;
  timestamp?: string | null;
  signature?: string | null;
  sign?: { secret: string; timestamp: number; bare?: boolean };
  path?: string;
}

async function post(target: Integration | { id: number | string; secret?: string }, body: unknown, options: PostOptions = {}) {
  const raw = typeof body === 'string' ? body : JSON.stringify(body);
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  const secret = options.secret === undefined ? target.secret : options.secret;
  if (secret) headers['x-chat-gateway-pbx-secret'] = secret;
  if (options.sign) {
    const hex = createHmac('sha256', options.sign.secret).update(`${options.sign.timestamp}.${raw}`).digest('hex');
    headers['x-chat-gateway-timestamp'] = String(options.sign.timestamp);
    headers['x-chat-gateway-signature'] = options.sign.bare ? hex : `sha256=${hex}`;
  }
  if (options.timestamp) headers['x-chat-gateway-timestamp'] = options.timestamp;
  if (options.signature) headers['x-chat-gateway-signature'] = options.signature;
  const path = options.path ?? `/integrations/pbx/webhook/${target.id}`;
  // Bounded: an answer that never comes fails here, naming the request, rather than as the test's timeout.
  const response = await fetch(`${suite.stack.apiUrl}${path}`, { method: 'POST', headers, body: raw, signal: AbortSignal.timeout(20_000) }).catch((error: unknown) => {
    throw new Error(`POST ${path} got no answer: ${(error as Error).name}`);
  });
  return { status: response.status, body: (await response.json()) as any };
}

const now = () => Math.floor(Date.now() / 1000);

/** A demo account whose PBX module switch has been folded by the policy engine. */
async function pbxAccount(): Promise<DemoAccount> {
  const account = await demoAccount(suite.stack);
  await until(async () => {
    const on = await suite.db.maybeOneFirst(sql.type(z.object({ on: z.boolean().nullable() }))`SELECT (state->'modules'->>'pbx')::boolean AS on FROM policy_state WHERE customer_id = ${account.customer_id}`);
    return on === true;
  }, 10_000, 'the PBX module to be on');
  return account;
}
const ledgerTexts = async () => ((await suite.stack.simulator.call('GET', '/sim/ledger')).body.messages as Array<{ text: string; number: string }>);

describe('POST /integrations/pbx/webhook/{integration_id}', () => {
  it('200 for a test event; nothing is sent', async () => {
    const account = await pbxAccount();
    const result = await post({ id: account.pbx_integration_id, secret: account.pbx_secret }, { event_type: 'test' });
    expect(result).toEqual({ status: 200, body: { success: true, status: 'processed', event_type: 'test', action: 'received' } });
  });

  it('outbound_message goes through the policy and is sent; a retry with the same external_message_id sends once', async () => {
    const account = await pbxAccount();
    const target = { id: account.pbx_integration_id, secret: account.pbx_secret };
    const event = { event_type: 'outbound_message', to: '+14155550101', message_text: 'Your ticket 77 was updated.', external_message_id: 'pbx-ext-1' };
    const first = await post(target, event);
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body).toMatchObject({ success: true, status: 'processed', event_type: 'outbound_message', action: 'received', message_id: expect.stringMatching(/^msg_/) });
    const again = await post(target, event);
    expect(again).toEqual(first);
    await new Promise((r) => setTimeout(r, 500));
    expect((await ledgerTexts()).filter((m) => m.text === 'Your ticket 77 was updated.')).toHaveLength(1);
  });

  it('without external_message_id, the same signed body re-sent inside the window sends once and gets the first answer', async () => {
    const account = await pbxAccount();
    const signed = await integration(account, { hmac: true });
    const event = { event_type: 'outbound_message', to: '+14155550103', message_text: 'Your appointment is confirmed for Monday.' };
    const first = await post(signed, event, { sign: { secret: signed.signing!, timestamp: now() } });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    // The PBX retries: same body, a fresh timestamp, so a new signature.
    const retry = await post(signed, event, { sign: { secret: signed.signing!, timestamp: now() + 1 } });
    expect(retry).toEqual(first);
    await new Promise((r) => setTimeout(r, 500));
    expect((await ledgerTexts()).filter((m) => m.text === 'Your appointment is confirmed for Monday.')).toHaveLength(1);
  });

  it('missed_call sends the integration template to customer_phone; call_started is only recorded', async () => {
    const account = await pbxAccount();
    const target = { id: account.pbx_integration_id, secret: account.pbx_secret };
    const missed = await post(target, { event_type: 'missed_call', customer_phone: '+14155550102', call_time: '14:05' });
    expect(missed.status, JSON.stringify(missed.body)).toBe(200);
    expect(missed.body.message_id).toMatch(/^msg_/);
    const started = await post(target, { event_type: 'call_started', customer_phone: '+14155550102', agent_extension: '204' });
    expect(started).toEqual({ status: 200, body: { success: true, status: 'processed', event_type: 'call_started', action: 'received' } });
    await new Promise((r) => setTimeout(r, 500));
    const sent = (await ledgerTexts()).filter((m) => m.number === '14155550102');
    expect(sent.map((m) => m.text)).toEqual(['Sorry we missed your call at 14:05. We will call you back as soon as we can.']);
  });

  it('413 payload_too_large for 256 KB + 1 byte, refused without reading it whole', async () => {
    const account = await pbxAccount();
    const limit = 256 * 1024;
    const big = JSON.stringify({ event_type: 'test', pad: 'x'.repeat(limit) }).slice(0, limit + 1);
    expect(big.length).toBe(limit + 1);
    const result = await post({ id: account.pbx_integration_id, secret: account.pbx_secret }, big);
    expect(result.status).toBe(413);
    expect(result.body).toMatchObject({ success: false, error: 'payload_too_large' });

    // A declared length over the limit is answered before the body is sent at all.
    const url = new URL(`${suite.stack.apiUrl}/integrations/pbx/webhook/${account.pbx_integration_id}`);
    const status = await new Promise<number>((resolve, reject) => {
      const req = httpRequest({ host: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers: { 'content-type': 'application/json', 'content-length': String(50 * 1024 * 1024) } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.write('{"event_type":"test"'); // and never the rest
    });
    expect(status).toBe(413);
  });

  it('401 invalid_pbx_webhook, one identical answer for unknown integration, wrong, missing secret and disabled', async () => {
    const account = await pbxAccount();
    const good = { id: account.pbx_integration_id, secret: account.pbx_secret };
    const disabled = await integration(account);
    await withOperator(suite.stack, ({ pool }) => disablePbx(pool, disabled.id));
    const answers = [
      await post({ id: 999_999 }, { event_type: 'test' }, { secret: account.pbx_secret }),
      await post(good, { event_type: 'test' }, { secret: 'pbx_wrong' }),
      await post(good, { event_type: 'test' }, { secret: null }),
      await post({ id: 'abc' }, { event_type: 'test' }, { secret: account.pbx_secret }),
      await post(disabled, { event_type: 'test' }),
    ];
    for (const answer of answers) expect(answer.status).toBe(401);
    expect(new Set(answers.map((a) => JSON.stringify(a.body))).size).toBe(1);
    expect(answers[0]!.body).toEqual({ success: false, error: 'invalid_pbx_webhook', message: 'The PBX webhook request could not be authenticated.', details: {} });
  });

  it('with HMAC: both signature forms accepted; missing, malformed, wrong, stale, future and replayed refused alike', async () => {
    const account = await pbxAccount();
    const signed = await integration(account, { hmac: true });
    const secret = signed.signing!;
    expect((await post(signed, { event_type: 'test', n: 1 }, { sign: { secret, timestamp: now() } })).status).toBe(200);
    expect((await post(signed, { event_type: 'test', n: 2 }, { sign: { secret, timestamp: now(), bare: true } })).status).toBe(200);

    const refusals = [
      await post(signed, { event_type: 'test', n: 3 }), // no signature, no timestamp
      await post(signed, { event_type: 'test', n: 4 }, { timestamp: String(now()), signature: 'sha256=nothex' }),
      await post(signed, { event_type: 'test', n: 5 }, { sign: { secret: 'not-the-secret', timestamp: now() } }),
      await post(signed, { event_type: 'test', n: 6 }, { sign: { secret, timestamp: now() - 301 } }),
      await post(signed, { event_type: 'test', n: 7 }, { sign: { secret, timestamp: now() + 301 } }),
      await post(signed, { event_type: 'test', n: 8 }, { signature: `sha256=${'a'.repeat(64)}` }), // no timestamp
    ];
    for (const refusal of refusals) expect(refusal.body).toMatchObject({ error: 'invalid_pbx_webhook', details: {} });
    for (const refusal of refusals) expect(refusal.status).toBe(401);

    const ts = now();
    const raw = JSON.stringify({ event_type: 'test', n: 9 });
    const signature = `sha256=${createHmac('sha256', secret).update(`${ts}.${raw}`).digest('hex')}`;
    expect((await post(signed, raw, { timestamp: String(ts), signature })).status).toBe(200);
    const replay = await post(signed, raw, { timestamp: String(ts), signature });
    expect(replay.status).toBe(401);
    expect(replay.body.error).toBe('invalid_pbx_webhook');
  });

  it('429 webhook_rate_limited past the integration rate', async () => {
    const account = await pbxAccount();
    const limited = await integration(account, { ratePerMinute: 2 });
    expect((await post(limited, { event_type: 'test', n: 1 })).status).toBe(200);
    expect((await post(limited, { event_type: 'test', n: 2 })).status).toBe(200);
    const third = await post(limited, { event_type: 'test', n: 3 });
    expect(third.status).toBe(429);
    expect(third.body).toMatchObject({ success: false, error: 'webhook_rate_limited', details: { limit_per_minute: 2 } });
  });

  it('400 for invalid JSON, an invalid payload naming the field, missing_phone and missing_message_text', async () => {
    const account = await pbxAccount();
    const target = { id: account.pbx_integration_id, secret: account.pbx_secret };
    const badJson = await post(target, '{"event_type":');
    expect(badJson).toMatchObject({ status: 400, body: { error: 'invalid_json' } });
    const unknownType = await post(target, { event_type: 'fax_received' });
    expect(unknownType).toMatchObject({ status: 400, body: { error: 'validation_error', details: { field: 'event_type' } } });
    const wrongType = await post(target, { event_type: 'outbound_message', to: 14155550100, message_text: 'x' });
    expect(wrongType).toMatchObject({ status: 400, body: { error: 'validation_error', details: { field: 'to' } } });
    const noType = await post(target, { to: '+14155550100' });
    expect(noType).toMatchObject({ status: 400, body: { error: 'validation_error', details: { field: 'event_type' } } });
    expect(await post(target, { event_type: 'outbound_message', message_text: 'hello' })).toMatchObject({ status: 400, body: { error: 'missing_phone', details: { field: 'to' } } });
    expect(await post(target, { event_type: 'missed_call' })).toMatchObject({ status: 400, body: { error: 'missing_phone', details: { field: 'customer_phone' } } });
    expect(await post(target, { event_type: 'outbound_message', to: '+14155550100' })).toMatchObject({ status: 400, body: { error: 'missing_message_text', details: { field: 'message_text' } } });
  });

  it('403 when the PBX module is off, and for a policy denial: a missed_call to a suppressed number is refused and logged', async () => {
    const account = await pbxAccount();
    const target = { id: account.pbx_integration_id, secret: account.pbx_secret };
    await withOperator(suite.stack, ({ pool, facts }) => suppress(pool, facts, { customerId: account.customer_id, phone: '+14155550199', reason: 'opted out by phone', by: 'agent' }));
    const refused = await post(target, { event_type: 'missed_call', customer_phone: '+14155550199', call_time: '09:00' });
    expect(refused.status, JSON.stringify(refused.body)).toBe(403);
    expect(refused.body).toMatchObject({ success: false, error: 'recipient_suppressed', details: { policy_error: 'recipient_suppressed', rule: 'recipient_not_suppressed', log_id: expect.any(Number) } });
    const logged = await suite.db.maybeOne(sql.type(PolicyLogRow.pick({ decision: true, error_code: true }))`SELECT decision, error_code FROM policy_log WHERE log_id = ${refused.body.details.log_id}`);
    expect(logged).toEqual({ decision: 'rejected', error_code: 'recipient_suppressed' });

    await withOperator(suite.stack, ({ pool, facts }) => toggleModules(pool, facts, { customerId: account.customer_id, enable: [], disable: ['pbx'] }));
    let off = await post(target, { event_type: 'test', n: 'off' });
    for (let i = 0; i < 20 && off.status === 200; i++) {
      await new Promise((r) => setTimeout(r, 100)); // the module switch is folded by the policy consumer
      off = await post(target, { event_type: 'test', n: `off-${i}` });
    }
    expect(off).toMatchObject({ status: 403, body: { error: 'module_not_enabled', details: { module: 'pbx' } } });
  });
});
