import { beforeAll, describe, expect, it } from 'vitest';
import { sql, z } from '@gw/db';
import { initialPolicyState, instancesFrom, quotaWindows, type CustomerPolicyState } from '@gw/policy';
import { SEAL_USES } from '@gw/security';
import { useApiFixture, type FollowedRecord, type TestAccount } from '../../../../test/support/api/api-fixture.ts';
import { memberWithRole, type TestMember } from '../../../../test/support/dashboard/members.ts';
import { textOf } from '../../../../test/support/dashboard/page-client.ts';
import { writeGuard } from '../../../../test/support/dashboard/instance-guard.ts';
import { Screenshots, useBrowser } from '../../../../test/support/browser.ts';
import { utcUntil } from '../format.ts';
import { lastWeeks } from './view.ts';

// /usage: the numbers come from the projections the policy consumer writes (not running here, so
// rows are inserted as it would write them): the folded state (plan, override, buckets, pauses),
// quota_usage, suppressions, policy_log, suppression_history and instance_guard. The limit request form stores
// the request and audits it; every number and request is its own customer's.
const suite = useApiFixture();
// One check in a real browser (Debian's chromium): the number guard as a person sees it.
const browser = useBrowser();
const app = () => suite.fixture.app;
const pool = () => suite.fixture.runtime.pool;
const DAY = 86_400_000;

let account: TestAccount;
let other: TestAccount;
const members: Record<string, TestMember> = {};
let stranger: TestMember;
const LAB = `ins_lab${Math.random().toString(16).slice(2, 10)}`;

const now = Date.now();
const RESTRICTED_UNTIL = now + 2 * 3_600_000;
const windows = quotaWindows(now, 0);
const todayStart = windows.dayResetsAt - DAY;
const twoDaysAgo = quotaWindows(todayStart - 2 * DAY, 0).day;
const thisWeek = lastWeeks(now).keys.at(-1)!;
const threeWeeksAgo = lastWeeks(now).keys.at(-4)!;

async function setState(customerId: string, patch: Partial<CustomerPolicyState>) {
  const state = { ...initialPolicyState(customerId), ...patch };
  await pool().query(sql.typeAlias('void')`
    INSERT INTO policy_state (customer_id, state) VALUES (${customerId}, ${sql.json(JSON.parse(JSON.stringify(state)))})
    ON CONFLICT (customer_id) DO UPDATE SET state = EXCLUDED.state`);
}

async function used(customerId: string, window: string, n: number) {
  await pool().query(sql.typeAlias('void')`INSERT INTO quota_usage (customer_id, window_key, used) VALUES (${customerId}, ${window}, ${n})`);
}

/** `n` decisions at `at`, as the policy consumer writes them (only what the chart reads matters). */
async function decisions(customerId: string, instanceId: string, at: number, n: number, errorCode: string | null) {
  await pool().query(sql.typeAlias('void')`
    INSERT INTO policy_log (command_id, event_id, customer_id, instance_id, message_id, recipient, message_purpose, message_digest,
                            decision, error_code, error_message, reasons, policy_version, decided_at, decision_event)
    SELECT 'cmd_' || gen_random_uuid(), 'evt_' || gen_random_uuid(), ${customerId}, ${instanceId}, 'msg_' || gen_random_uuid(), '+14155550100',
           'transactional', 'digest', ${errorCode === null ? 'accepted' : 'rejected'}, ${errorCode}, NULL, '[]'::jsonb, 'test',
           ${new Date(at).toISOString()}::timestamptz, '{}'::jsonb
      FROM generate_series(1, ${n})`);
}

async function suppression(customerId: string, recipient: string, source: string) {
  await pool().query(sql.typeAlias('void')`
    INSERT INTO suppressions (customer_id, recipient, source, reason, created_by, created_at) VALUES (${customerId}, ${recipient}, ${source}, 'r', 'recipient', now())`);
}

async function history(customerId: string, recipient: string, action: string, source: string, at: number) {
  await pool().query(sql.typeAlias('void')`
    INSERT INTO suppression_history (customer_id, recipient, action, source, reason, created_by, at)
    VALUES (${customerId}, ${recipient}, ${action}, ${source}, 'keyword:STOP', 'recipient', ${new Date(at).toISOString()}::timestamptz)`);
}

const Request = z.object({ id: z.string(), customer_id: z.string(), requested_daily: z.number().nullable(), requested_monthly: z.number().nullable(), reason: z.string(), requested_by: z.string(), status: z.string() });
const requestsOf = (customerId: string) => pool().any(sql.type(Request)`SELECT id, customer_id, requested_daily, requested_monthly, reason, requested_by, status FROM limit_requests WHERE customer_id = ${customerId} ORDER BY requested_at`);

const sectionOf = (html: string, id: string) => new RegExp(`<section class="card[^"]*" id="${id}">[\\s\\S]*?</section>`).exec(html)?.[0] ?? '';
const rowOf = (html: string, instanceId: string) => new RegExp(`<tr data-instance-id="${instanceId}"[^>]*>[\\s\\S]*?</tr>`).exec(html)?.[0] ?? '';
const bar = (series: string, category: string, value: number) => `data-series="${series}" data-category="${category}" data-value="${value}"`;

beforeAll(async () => {
  account = await suite.fixture.account();
  other = await suite.fixture.account();
  for (const role of ['owner', 'admin', 'developer', 'compliance', 'viewer'] as const) {
    members[role] = await memberWithRole(app(), pool(), suite.fixture.box, account.customer_id, role);
  }
  stranger = await memberWithRole(app(), pool(), suite.fixture.box, other.customer_id, 'owner');

  // A second instance of the customer, paused for review by the quality check.
  await pool().query(sql.typeAlias('void')`
    INSERT INTO instances (id, customer_id, name, manager_url, manager_instance, manager_api_key_enc)
    VALUES (${LAB}, ${account.customer_id}, 'lab-results', 'http://127.0.0.1:9', ${LAB}, ${suite.fixture.box.seal('k', SEAL_USES.managerApiKey(LAB))})`);
  await setState(account.customer_id, {
    plan: { planId: 'growth', validUntil: now + 20 * DAY },
    // Higher limits granted after review: 900 a day instead of Growth's 500.
    override: { at: now - DAY, daily: 900, grantedBy: 'ops-anna', reason: 'reviewed' },
    // A bucket level stamped ahead of now does not refill before then (as in the engine), so the page shows 2 whatever the test's pace.
    instances: instancesFrom({ buckets: { [account.instance_id]: { tokens: 2, at: now + 10 * 60_000 } } }),
    paused: {
      [LAB]: {
        reason: 'quality thresholds crossed: opt_out_rate',
        by: 'auto',
        at: Date.UTC(2026, 0, 5, 9, 15),
        signals: [
          { signal: 'violation_rate', rate: 0, count: 0, volume: 80, threshold: 0.2, minVolume: 20, crossed: false },
          { signal: 'opt_out_rate', rate: 0.0625, count: 5, volume: 80, threshold: 0.05, minVolume: 40, crossed: true },
          { signal: 'delivery_failure_rate', rate: 0, count: 0, volume: 0, threshold: 0.3, minVolume: 20, crossed: false },
        ],
      },
    },
  });
  await used(account.customer_id, windows.day, 412);
  await used(account.customer_id, windows.month, 3200);
  // Yesterday's window is not today's.
  await used(account.customer_id, quotaWindows(todayStart - DAY, 0).day, 77);
  for (const r of ['+14155550101', '+14155550102', '+14155550103']) await suppression(account.customer_id, r, 'opt_out');
  await suppression(account.customer_id, '+14155550104', 'manual');

  await decisions(account.customer_id, account.instance_id, todayStart + 1_000, 12, null);
  await decisions(account.customer_id, account.instance_id, todayStart + 2_000, 3, 'sending_throttled');
  await decisions(account.customer_id, account.instance_id, todayStart - 2 * DAY + 60_000, 5, null);
  await decisions(account.customer_id, LAB, todayStart - 2 * DAY + 120_000, 2, 'daily_message_limit_exceeded');
  // Before the chart's 30 days: not shown.
  await decisions(account.customer_id, account.instance_id, todayStart - 40 * DAY, 50, null);

  const monday = Date.parse(`${thisWeek}T00:00:00Z`);
  await history(account.customer_id, '+14155550101', 'suppressed', 'opt_out', monday + 1_000);
  await history(account.customer_id, '+14155550102', 'suppressed', 'opt_out', monday + 2_000);
  await history(account.customer_id, '+14155550103', 'suppressed', 'opt_out', Date.parse(`${threeWeeksAgo}T12:00:00Z`));
  // Neither counts as an opt-out: an opt-back and a manual suppression.
  await history(account.customer_id, '+14155550109', 'unsuppressed', 'opt_out', monday + 3_000);
  await history(account.customer_id, '+14155550104', 'suppressed', 'manual', monday + 4_000);

  // The number guard: the demo instance is new (day 2), has used its warm-up allowance and is
  // restricted after a rejected send; lab-results is established, its one restriction over.
  await writeGuard(pool(), { customerId: account.customer_id, instanceId: account.instance_id, firstConnectedAt: Date.UTC(2026, 0, 5, 9, 15), ageDays: 2, allowance: 20, firstContacts: 20, left: 0, restrictedUntil: RESTRICTED_UNTIL, signal: 'send_error', signals: 1 });
  await writeGuard(pool(), { customerId: account.customer_id, instanceId: LAB, firstConnectedAt: Date.UTC(2025, 10, 1), ageDays: 66, allowance: null, firstContacts: 7, left: null, restrictedUntil: now - 60_000, signal: 'reachout_timelock', signals: 2 });
  await writeGuard(pool(), { customerId: other.customer_id, instanceId: other.instance_id, ageDays: 0, firstConnectedAt: now, allowance: 10, firstContacts: 1, left: 9 });

  // The other customer: a Starter plan, its own numbers, no sends in the log.
  await setState(other.customer_id, { plan: { planId: 'starter', validUntil: now + 20 * DAY } });
  await used(other.customer_id, windows.day, 7);
  await used(other.customer_id, windows.month, 61);
  for (const r of ['+14155550201', '+14155550202', '+14155550203', '+14155550204', '+14155550205']) await suppression(other.customer_id, r, 'opt_out');
}, 120_000);

describe('the usage page', () => {
  it('shows today and this month against the effective limits (the override granted after review included)', async () => {
    const page = await members.viewer!.client.get('/usage');
    expect(page.status).toBe(200);
    const quotas = sectionOf(page.html, 'quotas');
    expect(quotas).toContain('<strong data-used="412" data-limit="900">412 of 900 today</strong>');
    expect(quotas).toContain('<strong data-used="3200" data-limit="5000">3,200 of 5,000 this month</strong>');
    expect(quotas).toContain('min="0" max="900"');
    expect(quotas).toContain('value="412"');
    expect(quotas).toContain('488 left.');
    expect(sectionOf(page.html, 'plan')).toContain('<strong>Growth</strong> plan');
    expect(textOf(page.html, 'override')).toBe('Your limits were raised after a review (granted by ops-anna).');
  });

  it('shows the velocity limits and what each instance may send at once now', async () => {
    const page = await members.viewer!.client.get('/usage');
    expect(textOf(page.html, 'velocity-burst')).toBe('Up to 30 messages at once from each instance;');
    expect(textOf(page.html, 'velocity-refill')).toBe('30 more messages a minute from each instance after that;');
    expect(textOf(page.html, 'velocity-interval')).toBe('At least 6 seconds between two messages from one instance to the same recipient.');
    const velocity = sectionOf(page.html, 'velocity');
    expect(rowOf(velocity, account.instance_id)).toContain('<td data-tokens="2">2 of 30 available now, 30 more a minute</td>');
    // No bucket in the state: full, as the engine counts it.
    expect(rowOf(velocity, LAB)).toContain('<td data-tokens="30">30 of 30 available now</td>');
  });

  it('counts the opted-out and manually suppressed recipients', async () => {
    const page = await members.viewer!.client.get('/usage');
    expect(textOf(page.html, 'opt-out-count')).toBe('3');
    expect(textOf(page.html, 'manual-count')).toBe('1');
    // A viewer may not read the list itself: no link to it.
    expect(sectionOf(page.html, 'opted-out')).not.toContain('href="/suppressed-recipients"');
    expect(sectionOf((await members.compliance!.client.get('/usage')).html, 'opted-out')).toContain('href="/suppressed-recipients"');
  });

  it('says which instance is paused for review, since when, by whom, why, with the signals the pause recorded', async () => {
    const page = await members.viewer!.client.get('/usage');
    const paused = rowOf(sectionOf(page.html, 'review'), LAB);
    expect(paused).toContain('data-paused="yes"');
    expect(paused).toContain('<span class="status bad">Paused for review</span> since 2026-01-05 09:15 UTC, by the gateway&#39;s automatic quality check.');
    expect(paused).toContain('<strong>Why:</strong> Too many problems in the last hours: recipients who opted out.');
    expect(paused).toContain('<li data-signal="opt_out_rate"><strong>Recipients who opted out: 5 of 80 messages sent (6.25 %); the review starts at 5 % once there are at least 40 (over the limit)</strong></li>');
    expect(paused).toContain('data-signal="violation_rate"');
    const sending = rowOf(sectionOf(page.html, 'review'), account.instance_id);
    expect(sending).toContain('data-paused="no"');
    expect(sending).toContain('Sending');
  });

  it("shows each instance's number guard, and a notice in words while one is restricted", async () => {
    const page = await members.viewer!.client.get('/usage');
    const guard = sectionOf(page.html, 'number-guard');
    const head = `Restricted until ${utcUntil(RESTRICTED_UNTIL, Date.now())}`;
    const why = 'the chat network rejected a message to a new contact. Replies to people who wrote to you still go; new contacts wait.';
    const words = `${head}: ${why}`;
    const young = rowOf(guard, account.instance_id);
    expect(young).toContain('data-restricted="yes"');
    expect(young).toContain('<td class="guard-age">2 days (first connected Mon 5 Jan 2026)</td>');
    expect(young).toContain('<td class="guard-allowance">20 first contacts</td>');
    expect(young).toContain('<td class="num guard-first-contacts">20</td>');
    expect(young).toContain('<td class="num guard-left"><strong>None left</strong></td>');
    expect(young).toContain(`<p><strong>${head}</strong>: ${why}</p>`);
    const established = rowOf(guard, LAB);
    expect(established).toContain('data-restricted="no"');
    expect(established).toContain('<td class="guard-allowance">No warm-up limit</td>');
    expect(established).toContain('<td class="num guard-first-contacts">7</td>');
    expect(established).toContain('The chat network has warned this number 2 times lately; repeated warnings pause it for review.');

    // The notice at the top names the restricted instance only; the same words on its pages.
    const notice = new RegExp(`<p class="notice warn" role="status" data-restricted-instance="${account.instance_id}" data-signal="send_error" data-until="${new Date(RESTRICTED_UNTIL).toISOString()}"><strong>[^<]+</strong>: ([^<]+)</p>`);
    expect(notice.exec(page.html)?.[1]).toBe(words);
    expect(page.html.match(/data-restricted-instance=/g)).toHaveLength(1);
    expect(notice.test((await members.viewer!.client.get('/instances')).html)).toBe(true);
    const manage = await members.viewer!.client.get(`/instances/${account.instance_id}/manage`);
    expect(manage.html).toContain(`data-signal="send_error" data-until="${new Date(RESTRICTED_UNTIL).toISOString()}">${words}</p>`);
    expect((await members.viewer!.client.get(`/instances/${LAB}/manage`)).html).not.toContain('data-restricted-instance');
    // Another customer sees only its own instance, unrestricted.
    const theirs = await stranger.client.get('/usage');
    expect(rowOf(sectionOf(theirs.html, 'number-guard'), other.instance_id)).toContain('<td class="num guard-left">9</td>');
    expect(theirs.html).not.toContain('data-restricted-instance');
  });

  it('draws sends per day by outcome and opt-outs per week, with the same numbers as tables', async () => {
    const page = await members.viewer!.client.get('/usage');
    const sends = sectionOf(page.html, 'sends');
    expect(sends).toContain('<svg xmlns="http://www.w3.org/2000/svg" id="sends-chart"');
    expect(sends).toContain('<title id="sends-chart-title">Messages per day, last 30 days</title>');
    expect(sends).toContain(bar('accepted', windows.day, 12));
    expect(sends).toContain(bar('sending_throttled', windows.day, 3));
    expect(sends).toContain(bar('accepted', twoDaysAgo, 5));
    expect(sends).toContain(bar('daily_message_limit_exceeded', twoDaysAgo, 2));
    expect(sends.match(/class="chart-bar"/g)).toHaveLength(4);
    // The table: accepted, daily limit, too fast, total (series in the policy's order).
    expect(sends).toContain('<tfoot><tr><th scope="row">Total</th><td class="num">17</td><td class="num">2</td><td class="num">3</td><td class="num">22</td></tr></tfoot>');
    expect(sends).toContain('Refused: daily limit: <code>daily_message_limit_exceeded</code>');

    const optOuts = sectionOf(page.html, 'opt-outs');
    expect(optOuts).toContain('id="opt-outs-chart"');
    expect(optOuts).toContain(bar('opt_out', thisWeek, 2));
    expect(optOuts).toContain(bar('opt_out', threeWeeksAgo, 1));
    expect(optOuts.match(/class="chart-bar"/g)).toHaveLength(2);
    expect(optOuts).toContain('<tfoot><tr><th scope="row">Total</th><td class="num">3</td><td class="num">3</td></tr></tfoot>');
    // No inline styles or scripts anywhere on the page (the CSP allows neither).
    expect(page.html).not.toMatch(/ style=|<script(?! src)/);
  });

  it('shows another customer only its own numbers, and empty charts as messages', async () => {
    const page = await stranger.client.get('/usage');
    expect(page.status).toBe(200);
    expect(sectionOf(page.html, 'quotas')).toContain('7 of 100 today');
    expect(sectionOf(page.html, 'quotas')).toContain('61 of 1,000 this month');
    expect(textOf(page.html, 'opt-out-count')).toBe('5');
    expect(textOf(page.html, 'manual-count')).toBe('0');
    expect(page.html).not.toContain(LAB);
    expect(page.html).not.toContain('lab-results');
    expect(page.html).not.toContain('ops-anna');
    expect(page.html).toContain('<p class="chart-empty" id="sends-chart-empty">No sends yet in the last 30 days.');
    expect(page.html).toContain('<p class="chart-empty" id="opt-outs-chart-empty">No opt-outs in the last 12 weeks.</p>');
    expect(page.html).not.toContain('class="chart-bar"');
  });
});

describe('asking for higher limits', () => {
  it('refuses bad input with a 400 and the reason, storing nothing', async () => {
    const owner = members.owner!;
    const cases: Array<[Record<string, string>, string]> = [
      [{}, 'Enter the daily limit you need, the monthly limit you need, or both.'],
      [{ daily: '', monthly: '', reason: 'more please' }, 'Enter the daily limit you need, the monthly limit you need, or both.'],
      [{ daily: 'lots', reason: 'more please' }, 'Write the daily limit as a whole number'],
      [{ daily: '900', reason: 'more please' }, 'Your daily limit is already 900: ask for more than that'],
      [{ daily: '6000', reason: 'more please' }, 'A daily limit of 6,000 is more than the monthly limit of 5,000'],
      [{ daily: '2000', reason: '   ' }, 'Tell us what you send and why you need more'],
      [{ daily: '2000', reason: 'x'.repeat(2001) }, 'the reason has at most 2,000 characters'],
    ];
    for (const [fields, message] of cases) {
      const page = await owner.client.submit('/usage', '/usage/limit-request', fields);
      expect(page.status, JSON.stringify(fields).slice(0, 80)).toBe(400);
      expect(textOf(page.html, 'limit-request-error')).toContain(message);
    }
    expect(await requestsOf(account.customer_id)).toEqual([]);
  });

  it('stores a request, audits it, and shows it waiting for review', async () => {
    const owner = members.owner!;
    const reason = 'Appointment reminders for 3 new clinics <b>about 900 a day</b>';
    const sent = await owner.client.submit('/usage', '/usage/limit-request', { daily: '2,000', monthly: '', reason });
    expect(sent.status).toBe(303);
    expect(sent.location).toBe('/usage?notice=requested#limit-requests');
    const [stored] = await requestsOf(account.customer_id);
    expect(stored).toMatchObject({ requested_daily: 2000, requested_monthly: null, reason, requested_by: owner.email, status: 'pending' });

    const audit = await suite.fixture.record(
      (r: FollowedRecord) => r.event.type === 'AccountChanged' && r.event.payload.action === 'limits.requested' && r.event.payload.subject_id === stored!.id,
      'the limits.requested audit record',
    );
    expect(audit.event.type === 'AccountChanged' && audit.event.payload).toMatchObject({ customer_id: account.customer_id, by: owner.email, via: 'dashboard' });
    expect(audit.event.type === 'AccountChanged' && JSON.parse(audit.event.payload.details)).toEqual({ requested_daily: 2000, requested_monthly: null, daily_limit: 900, monthly_limit: 5000 });

    const page = await owner.client.get('/usage?notice=requested');
    expect(page.html).toContain('Your request is sent.');
    expect(page.html).toContain('id="pending-request"');
    expect(page.html).not.toContain('id="limit-request-form"');
    const row = new RegExp(`<tr data-request-id="${stored!.id}" data-status="pending">[\\s\\S]*?</tr>`).exec(page.html)?.[0] ?? '';
    expect(row).toContain('2,000 a day');
    expect(row).toContain('Appointment reminders for 3 new clinics &lt;b&gt;about 900 a day&lt;/b&gt;');
    expect(row).toContain('Waiting for review');
    // Every member sees the requests; a viewer gets no form.
    const viewer = await members.viewer!.client.get('/usage');
    expect(viewer.html).toContain(`data-request-id="${stored!.id}"`);
    expect(viewer.html).not.toContain('id="limit-request-form"');
  });

  it('allows one pending request at a time: a second is refused with a clear message', async () => {
    const page = await members.admin!.client.submit('/usage', '/usage/limit-request', { monthly: '9000', reason: 'also this' });
    expect(page.status).toBe(409);
    expect(textOf(page.html, 'limit-request-error')).toBe('A request for higher limits is already waiting for review. You can ask again once it has been decided.');
    expect(await requestsOf(account.customer_id)).toHaveLength(1);
  });

  it('refuses the roles without limits.request (403), storing nothing', async () => {
    for (const role of ['viewer', 'compliance', 'developer'] as const) {
      const page = await members[role]!.client.submit('/usage', '/usage/limit-request', { daily: '5000', monthly: '50000', reason: 'r' });
      expect(page.status, role).toBe(403);
    }
    expect(await requestsOf(account.customer_id)).toHaveLength(1);
  });

  it("keeps each customer's requests its own: another's pending request neither shows nor blocks", async () => {
    const before = await stranger.client.get('/usage');
    expect(before.html).toContain('id="no-requests"');
    expect(before.html).not.toContain('Appointment reminders');
    expect(before.html).toContain('id="limit-request-form"');
    const sent = await stranger.client.submit('/usage', '/usage/limit-request', { daily: '150', reason: 'pharmacy pickups' });
    expect(sent.status).toBe(303);
    expect(await requestsOf(other.customer_id)).toMatchObject([{ requested_daily: 150, status: 'pending' }]);
    const mine = await members.owner!.client.get('/usage');
    expect(mine.html).not.toContain('pharmacy pickups');
    expect(mine.html.match(/data-request-id=/g)).toHaveLength(1);
  });
});

describe('the number guard, in a browser', () => {
  it('shows the restriction notice and the guard table, readable on a desktop and a phone', async () => {
    const address = await app().listen({ port: 0, host: '127.0.0.1' });
    // The viewer's session (signed in through the pages by memberWithRole), handed to the browser.
    await browser.session.context.addCookies([...members.viewer!.client.cookies].map(([name, value]) => ({ name, value, url: address, secure: name.startsWith('__Host-') })));
    const shots = new Screenshots('usage-number-guard');
    const page = await browser.session.open('desktop');
    try {
      await page.goto(`${address}/usage`);
      await page.getByRole('status').filter({ hasText: 'the chat network rejected a message to a new contact' }).waitFor();
      const guard = page.locator('#number-guard');
      await guard.getByRole('heading', { name: 'Guarding your numbers' }).waitFor();
      const young = guard.getByRole('row').filter({ has: page.getByRole('rowheader', { name: 'demo-' }) });
      expect(await young.getByRole('cell').allInnerTexts()).toEqual([
        '2 days (first connected Mon 5 Jan 2026)',
        '20 first contacts',
        '20',
        'None left',
        expect.stringMatching(/^Restricted until [^:]+:\d\d UTC: the chat network rejected a message to a new contact\. Replies to people who wrote to you still go; new contacts wait\.\s+The chat network has warned this number once lately; repeated warnings pause it for review\.$/),
      ]);
      // The table fits the card on a desktop (no sideways scrolling).
      expect(await guard.locator('.table-wrap').evaluate((el) => el.scrollWidth <= el.clientWidth)).toBe(true);
      await guard.scrollIntoViewIfNeeded();
      await shots.take(page, 'usage');
      await guard.screenshot({ path: `${shots.dir}/guard-section.png` });
      await shots.takeNarrow(page, 'usage');
    } catch (error) {
      await shots.take(page, 'failed-here').catch(() => undefined);
      throw error;
    } finally {
      await page.close();
    }
  });
});
