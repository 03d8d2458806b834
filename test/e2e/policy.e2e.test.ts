import { describe, expect, it } from 'vitest';
import { sql, z } from '@gw/db';
import { PolicyLogRow } from '@gw/policy-log';
import {
  allowPurposes,
  pauseInstance,
  resumeInstance,
  setLimits,
  setPlan,
  suppress,
  toggleModules,
  unsuppress,
  type LimitsInput,
} from '../../services/gatewayctl/src/policy/commands.ts';
import { demoAccount, OPEN_LIMITS, withOperator, type DemoAccount } from '../support/accounts.ts';
import { send, type HttpResult } from '../support/http.ts';
import { until, useStack } from '../support/suite.ts';

const suite = useStack();


/** A Scale-plan account whose limits are open except for those given (a manual-review override). */
async function account(limits: Partial<LimitsInput> = {}): Promise<DemoAccount> {
  const demo = await demoAccount(suite.stack, { plan: 'scale' });
  await withOperator(suite.stack, ({ pool, facts }) => setLimits(pool, facts, { ...OPEN_LIMITS, ...limits, customerId: demo.customer_id }));
  return demo;
}

let phoneCounter = 0;
const freshPhone = () => `+1415666${String(phoneCounter++).padStart(4, '0')}`;

function sendAs(demo: DemoAccount, overrides: Record<string, unknown> = {}): Promise<HttpResult> {
  return send(suite.stack.apiUrl, demo.api_key, {
    instance_id: demo.instance_id,
    phone: freshPhone(),
    message: `Your order ${1000 + phoneCounter} has shipped.`,
    message_purpose: 'transactional',
    ...overrides,
  });
}

function expectRefusal(result: HttpResult, status: number, code: string, rule: string) {
  expect(result.status, JSON.stringify(result.body)).toBe(status);
  expect(result.body).toMatchObject({ success: false, error: code, details: { rule, log_id: expect.any(Number) } });
  expect(typeof result.body.message).toBe('string');
}

const LogEntry = PolicyLogRow.pick({ decision: true, error_code: true, reasons: true, entry_hash: true });

async function logEntry(logId: number) {
  return suite.db.one(sql.type(LogEntry)`SELECT decision, error_code, reasons, entry_hash FROM policy_log WHERE log_id = ${logId}`);
}

describe('every policy code through POST /api/send-message', () => {
  it('403 module_not_enabled when the API module is off, and 200 once it is on again', async () => {
    const demo = await account();
    await withOperator(suite.stack, ({ pool, facts }) => toggleModules(pool, facts, { customerId: demo.customer_id, enable: [], disable: ['api'] }));
    const refused = await sendAs(demo);
    expectRefusal(refused, 403, 'module_not_enabled', 'module_enabled');
    const entry = await logEntry(refused.body.details.log_id);
    expect(entry).toMatchObject({ decision: 'rejected', error_code: 'module_not_enabled' });
    // Every rule is recorded: the first failed, the rest skipped.
    expect(entry.reasons[0]).toMatchObject({ rule: 'module_enabled', outcome: 'fail' });
    expect(entry.reasons.slice(1).every((r: { outcome: string }) => r.outcome === 'skipped')).toBe(true);
    await withOperator(suite.stack, ({ pool, facts }) => toggleModules(pool, facts, { customerId: demo.customer_id, enable: ['api'], disable: [] }));
    expect((await sendAs(demo)).status).toBe(200);
  });

  it('403 active_plan_required without an active plan', async () => {
    const demo = await account();
    await withOperator(suite.stack, ({ pool, facts }) => setPlan(pool, facts, { customerId: demo.customer_id, plan: 'none', reason: 'cancelled' }));
    expectRefusal(await sendAs(demo), 403, 'active_plan_required', 'active_plan');
  });

  it('422 message_purpose_not_allowed for a valid purpose the customer may not use', async () => {
    const demo = await account();
    await withOperator(suite.stack, ({ pool, facts }) => allowPurposes(pool, facts, { customerId: demo.customer_id, purposes: ['authentication'] }));
    expectRefusal(await sendAs(demo, { message_purpose: 'transactional' }), 422, 'message_purpose_not_allowed', 'purpose_allowed');
    expect((await sendAs(demo, { message_purpose: 'authentication', message: 'Your verification code is 482913.' })).status).toBe(200);
  });

  it('403 recipient_suppressed for a suppressed recipient, lifted by unsuppress', async () => {
    const demo = await account();
    await withOperator(suite.stack, ({ pool, facts }) => suppress(pool, facts, { customerId: demo.customer_id, phone: '+1 415 777 0001', reason: 'asked by phone', by: 'support' }));
    const refused = await sendAs(demo, { phone: '+14157770001' });
    expectRefusal(refused, 403, 'recipient_suppressed', 'recipient_not_suppressed');
    const rows = await suite.db.any(sql.type(z.object({ recipient: z.string(), source: z.string() }))`SELECT recipient, source FROM suppressions WHERE customer_id = ${demo.customer_id}`);
    expect(rows).toEqual([{ recipient: '+14157770001', source: 'manual' }]);
    await withOperator(suite.stack, ({ pool, facts }) => unsuppress(pool, facts, { customerId: demo.customer_id, phone: '+14157770001' }));
    expect((await sendAs(demo, { phone: '+14157770001' })).status).toBe(200);
  });

  it('423 instance_paused_for_review while paused, 200 after resume', async () => {
    const demo = await account();
    await withOperator(suite.stack, ({ pool, facts }) => pauseInstance(pool, facts, { instanceId: demo.instance_id, reason: 'complaint under review', by: 'compliance' }));
    expectRefusal(await sendAs(demo), 423, 'instance_paused_for_review', 'instance_not_paused');
    await withOperator(suite.stack, ({ pool, facts }) => resumeInstance(pool, facts, { instanceId: demo.instance_id, reason: 'review passed', by: 'compliance' }));
    expect((await sendAs(demo)).status).toBe(200);
  });

  it('429 daily_message_limit_exceeded once the daily limit is used', async () => {
    const demo = await account({ daily: 2 });
    expect((await sendAs(demo)).status).toBe(200);
    expect((await sendAs(demo)).status).toBe(200);
    const refused = await sendAs(demo);
    expectRefusal(refused, 429, 'daily_message_limit_exceeded', 'daily_limit');
    expect(refused.body.details).toMatchObject({ limit: 2 });
  });

  it('429 monthly_message_limit_exceeded once the monthly limit is used', async () => {
    const demo = await account({ monthly: 1 });
    expect((await sendAs(demo)).status).toBe(200);
    expectRefusal(await sendAs(demo), 429, 'monthly_message_limit_exceeded', 'monthly_limit');
  });

  it('429 sending_throttled by the per-recipient interval and by the instance bucket', async () => {
    const spaced = await account({ recipientIntervalMs: 60_000 });
    expect((await sendAs(spaced, { phone: '+14157770002' })).status).toBe(200);
    const again = await sendAs(spaced, { phone: '+14157770002', message: 'Your order 2 has shipped.' });
    expectRefusal(again, 429, 'sending_throttled', 'velocity');

    const bursty = await account({ burst: 2, refillPerMinute: 1 });
    expect((await sendAs(bursty)).status).toBe(200);
    expect((await sendAs(bursty)).status).toBe(200);
    expectRefusal(await sendAs(bursty), 429, 'sending_throttled', 'velocity');
  });

  it('403 policy_violation for promotional, political and SHAFT content, with the reason', async () => {
    const demo = await account();
    const promo = await sendAs(demo, { message: 'HUGE SALE! 50% off everything this weekend only. Use promo code SAVE50, buy now!' });
    expectRefusal(promo, 403, 'policy_violation', 'content_policy');
    expect(promo.body.details.reason).toBe('promotional_content');
    const political = await sendAs(demo, { message: 'Vote for our candidate on election day and donate to the campaign!' });
    expectRefusal(political, 403, 'policy_violation', 'content_policy');
    expect(political.body.details.reason).toBe('political_content');
  });

  it('403 policy_violation for a public URL shortener; a branded link passes', async () => {
    const demo = await account();
    const short = await sendAs(demo, { message: 'Track your parcel here: https://bit.ly/3xYzAbc' });
    expectRefusal(short, 403, 'policy_violation', 'url_shortener');
    expect(short.body.details.reason).toBe('url_shortener');
    expect((await sendAs(demo, { message: 'Track your parcel here: https://track.acme-shop.example/p/3xYzAbc' })).status).toBe(200);
  });

  it('403 policy_violation for a bulk campaign: one body to more recipients than allowed', async () => {
    const demo = await account({ bulkRecipients: 3 });
    const body = 'Reminder: your appointment with Dr. Lee is tomorrow at 10:00.';
    for (let i = 0; i < 3; i++) expect((await sendAs(demo, { message: body, message_purpose: 'operational' })).status).toBe(200);
    const bulk = await sendAs(demo, { message: body, message_purpose: 'operational' });
    expectRefusal(bulk, 403, 'policy_violation', 'bulk_campaign');
    expect(bulk.body.details.reason).toBe('bulk_campaign');
  });
});

describe('limits under concurrency', () => {
  it('with many concurrent senders, exactly the daily limit succeed', async () => {
    const limit = 10;
    const demo = await account({ daily: limit });
    const results = await Promise.all(Array.from({ length: 3 * limit }, () => sendAs(demo)));
    const ok = results.filter((r) => r.status === 200);
    const refused = results.filter((r) => r.status === 429);
    expect(ok).toHaveLength(limit);
    expect(refused).toHaveLength(2 * limit);
    for (const r of refused) expect(r.body.error).toBe('daily_message_limit_exceeded');
    const usage = await suite.db.any(sql.type(z.object({ used: z.number() }))`SELECT used FROM quota_usage WHERE customer_id = ${demo.customer_id} AND window_key LIKE '____-__-__'`);
    expect(usage).toEqual([{ used: limit }]);
    const dispatched = await suite.db.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM deliveries WHERE customer_id = ${demo.customer_id} AND state = 'dispatched'`);
    expect(dispatched).toBe(limit);
    // And exactly that many reached the instance.
    const ledger: Array<{ instance: string }> = (await suite.stack.simulator.call('GET', '/sim/ledger')).body.messages;
    expect(ledger.filter((m) => m.instance.startsWith(`${demo.instance_name}-`))).toHaveLength(limit);
  });
});
