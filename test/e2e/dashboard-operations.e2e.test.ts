// The dashboard's operations and compliance views in a real browser (Debian's chromium through
// playwright-core), against the whole stack: an inbound STOP shows in the inbound log and among
// the suppressed recipients with its cause; a test send shows in its message timeline with every
// rule, then delivered and read; a compliance member exports the policy log as CSV and downloads
// its verify report, which a viewer may not. Screenshots: .run/test-results/screenshots/<test>/.
import { readFileSync } from 'node:fs';
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { createPool, sql, z } from '@gw/db';
import { describeRules } from '@gw/policy';
import { SecretBox } from '@gw/security';
import { addMembership, createUser, hashPassword, newRecoveryCodes, newTotpSecret, saveEnrolment, type Role } from '@gw/dashboard/seeding';
import { demoAccount, unusedTotpCode, type DemoAccount } from '../support/accounts.ts';
import { Screenshots, useBrowser } from '../support/browser.ts';
import { parseCsv } from '../support/csv.ts';
import { send } from '../support/http.ts';
import { useStack } from '../support/suite.ts';

const suite = useStack({ services: ['api', 'policy', 'delivery', 'instance-events', 'webhooks'] });
const browser = useBrowser();
const PASSWORD = 'a long enough password for the office';

interface Person {
  email: string;
  secret: string;
}

let account: DemoAccount;
const people = new Map<Role, Person>();

/** A member of the demo customer with this role, enrolled in two-factor authentication, as an invitation would leave them. */
async function person(role: Role): Promise<Person> {
  const pool = await createPool(suite.stack.isolation.databaseUrl, { maxConnections: 1 });
  try {
    const email = `${role}-${Date.now().toString(36)}@clinic.example`;
    const userId = await createUser(pool, email, await hashPassword(PASSWORD), { verified: true });
    await addMembership(pool, userId, account.customer_id, role);
    const secret = newTotpSecret();
    await saveEnrolment(pool, new SecretBox(suite.stack.env.GATEWAY_SECRET_KEY!), userId, secret, newRecoveryCodes());
    return { email, secret };
  } finally {
    await pool.end();
  }
}

beforeAll(async () => {
  account = await demoAccount(suite.stack);
  for (const role of ['owner', 'compliance', 'viewer'] as const) people.set(role, await person(role));
}, 120_000);

/** Signs in as `role` through the sign-in pages (a fresh cookie jar), and leaves the page on `path`. */
async function signIn(role: Role, path: string): Promise<Page> {
  await browser.session.context.clearCookies();
  const page = await browser.session.open('desktop');
  const who = people.get(role)!;
  await page.goto(`${suite.stack.apiUrl}/sign-in?next=${encodeURIComponent(path)}`);
  await page.getByLabel('Email').fill(who.email);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  // The same person signs in again within one code period: a code works once, so a fresh one.
  await page.getByLabel('Code').fill(await unusedTotpCode(suite.stack, who.email, who.secret));
  await page.getByRole('button', { name: 'Continue' }).click();
  await page.waitForURL((url) => url.pathname === path.split('?')[0]);
  return page;
}

/** Runs a browser test, saving the page as it was if it fails. */
async function inBrowser(shots: Screenshots, pages: Page[], work: () => Promise<void>): Promise<void> {
  try {
    await work();
  } catch (error) {
    for (const page of pages) await shots.take(page, 'failed-here').catch(() => undefined);
    throw error;
  } finally {
    for (const page of pages) await page.close();
  }
}

/** The demo instance's name on the instance manager (the simulator). */
async function managerInstance(): Promise<string> {
  const pool = await createPool(suite.stack.isolation.databaseUrl, { maxConnections: 1 });
  try {
    return await pool.oneFirst(sql.type(z.object({ manager_instance: z.string() }))`SELECT manager_instance FROM instances WHERE id = ${account.instance_id}`);
  } finally {
    await pool.end();
  }
}

describe('the operations and compliance views, in a browser', () => {
  it('an inbound STOP appears in the inbound log and among the suppressed recipients, with its cause', async () => {
    const shots = new Screenshots('dashboard-opt-out');
    const phone = '+14155557301';
    const manager = await managerInstance();
    const inbound = await suite.stack.simulator.call('POST', `/sim/instances/${encodeURIComponent(manager)}/inbound`, { body: { from: phone.slice(1), text: 'STOP' } });
    expect(inbound.status).toBeLessThan(300);
    const page = await signIn('owner', '/inbound-logs');
    await inBrowser(shots, [page], async () => {
      // The consumer writes the log a moment after the manager's event: the page is reloaded until it shows.
      const row = page.getByRole('row').filter({ hasText: phone });
      for (let i = 0; i < 30 && (await row.count()) === 0; i++) {
        await page.waitForTimeout(500);
        await page.reload();
      }
      await row.getByText('Opted out (keyword)').waitFor();
      await shots.take(page, 'inbound-log');
      await shots.takeNarrow(page, 'inbound-log');

      await row.getByRole('link', { name: 'See in opt-outs' }).click();
      await page.getByRole('heading', { level: 1, name: /Opt-outs and suppressed recipients/ }).waitFor();
      const suppressed = page.locator('table').first().getByRole('row').filter({ hasText: phone });
      for (let i = 0; i < 30 && (await suppressed.count()) === 0; i++) {
        await page.waitForTimeout(500);
        await page.reload();
      }
      await suppressed.getByText('Opted out').first().waitFor();
      // Its cause: the message itself, with when it arrived and a link to it.
      await suppressed.getByText('STOP').first().waitFor();
      await suppressed.getByRole('link', { name: 'See the message' }).waitFor();
      await shots.take(page, 'suppressed-recipients');
      await shots.takeNarrow(page, 'suppressed-recipients');
    });
  });

  it('a test send appears in the message timeline with its rules, then delivered and read', async () => {
    const shots = new Screenshots('dashboard-message-timeline');
    const page = await signIn('owner', `/instances/${account.instance_id}/manage`);
    await inBrowser(shots, [page], async () => {
      await page.getByLabel('Recipient').fill('+14155557302');
      await page.getByLabel('Purpose').selectOption('transactional');
      await page.getByLabel('Message').fill('Your appointment on Thursday at 15:00 is confirmed.');
      await page.getByRole('button', { name: 'Send test message' }).click();
      await page.locator('#test-send-status').waitFor();
      await shots.take(page, 'test-send');
      await page.getByRole('link', { name: /Follow it/ }).click();
      await page.getByRole('heading', { level: 1, name: /Message/ }).waitFor();

      // Every rule of the policy, in the order it checked them.
      const rules = describeRules().map((r) => r.name);
      const shown = await page.locator('#rules-table tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-rule')));
      expect(shown).toEqual(rules);
      // The simulator's phone reports it delivered, then read: the page shows both once reloaded.
      const read = page.locator('[data-step="receipt-read"]');
      for (let i = 0; i < 40 && (await read.count()) === 0; i++) {
        await page.waitForTimeout(500);
        await page.reload();
      }
      await page.locator('[data-step="receipt-delivered"]').waitFor();
      await read.waitFor();
      await shots.take(page, 'message-timeline');
      await shots.takeNarrow(page, 'message-timeline');

      // Found again by the search, by the recipient's number.
      await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'Messages' }).click();
      await page.getByLabel('Recipient’s phone').fill('+14155557302');
      await page.getByRole('button', { name: 'Search' }).click();
      await page.locator('#results-table tbody tr').first().waitFor();
      expect(await page.locator('#results-table tbody tr').count()).toBe(1);
      await shots.take(page, 'message-found-by-phone');

      // The send counts against the plan on the usage page, in today's bar of the sends chart.
      await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'Usage' }).click();
      await page.getByRole('heading', { level: 1, name: /Usage/ }).waitFor();
      expect(await page.locator('rect.chart-bar[data-series="accepted"]').count()).toBeGreaterThan(0);
      await shots.take(page, 'usage');
      await shots.takeNarrow(page, 'usage');
    });
  });

  it('a compliance member exports the policy log as CSV and downloads a verify report; a viewer can do neither', async () => {
    const shots = new Screenshots('dashboard-compliance');
    // Entries to export: two sends through the API, one of them to the number that opted out above.
    const accepted = await send(suite.stack.apiUrl, account.api_key, { instance_id: account.instance_id, phone: '+14155557303', message: 'Your prescription is ready for collection.', message_purpose: 'transactional' });
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(200);
    const refused = await send(suite.stack.apiUrl, account.api_key, { instance_id: account.instance_id, phone: '+14155557301', message: 'Your prescription is ready for collection.', message_purpose: 'transactional' });
    expect(refused.body.error).toBe('recipient_suppressed');

    const page = await signIn('compliance', '/policy-log');
    await inBrowser(shots, [page], async () => {
      await page.getByRole('heading', { level: 1, name: 'Policy log' }).waitFor();
      await page.getByRole('row').filter({ hasText: '+14155557303' }).first().waitFor();
      await shots.take(page, 'policy-log');

      // The CSV: what the page lists, as a file (the page's script shows its progress, then saves it).
      const [csv] = await Promise.all([page.waitForEvent('download'), page.locator('#export-csv').click()]);
      const text = readFileSync((await csv.path())!, 'utf8');
      const [header, ...rows] = parseCsv(text);
      const column = (name: string) => rows.map((row) => row[header!.indexOf(name)]);
      expect(header!.slice(0, 3)).toEqual(['log_id', 'decided_at', 'occurred_at']);
      expect(column('message_id')).toContain(String(accepted.body.message_id));
      expect(column('error_code')).toContain('recipient_suppressed');
      expect(new Set(column('customer_id'))).toEqual(new Set([account.customer_id]));
      await page.locator('#export-progress').getByText(/Saved as/).waitFor();
      await shots.take(page, 'policy-log-exported');

      // The verify report: the chain through this customer's entries and the replay of its commands.
      const [report] = await Promise.all([page.waitForEvent('download'), page.locator('#verify-report').click()]);
      const verified = JSON.parse(readFileSync((await report.path())!, 'utf8')) as { ok: boolean; customer_id: string; divergences: unknown[] };
      expect(verified).toMatchObject({ ok: true, customer_id: account.customer_id, divergences: [] });
      await page.locator('#verify-progress').waitFor();
      await page.locator('#verify-result [data-role="verdict"]').getByText('Intact', { exact: true }).waitFor();
      await shots.take(page, 'verify-report');
      // Its status page (a plain GET starts nothing) shows what the last verification found.
      await page.getByRole('link', { name: 'its status and the last result' }).click();
      await page.getByRole('heading', { level: 1, name: 'Verify my log' }).waitFor();
      expect(await page.locator('#verify-status').textContent()).toBe('No verification of your log is running.');
      expect(await page.locator('#verify-verdict').textContent()).toBe('Intact');
      await shots.take(page, 'verify-status');
    });

    // A viewer has no Policy log in the menu, and is refused the page, the export and the report.
    const viewer = await signIn('viewer', '/usage');
    await inBrowser(shots, [viewer], async () => {
      await viewer.getByRole('heading', { level: 1, name: 'Usage' }).waitFor();
      expect(await viewer.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'Policy log' }).count()).toBe(0);
      for (const path of ['/policy-log', '/policy-log/export?format=csv', '/policy-log/verify-report']) {
        const response = await viewer.request.get(`${suite.stack.apiUrl}${path}`, { maxRedirects: 0 });
        expect(response.status(), path).toBe(403);
      }
      await viewer.goto(`${suite.stack.apiUrl}/policy-log`);
      await viewer.getByRole('heading', { name: 'Not allowed' }).waitFor();
      await shots.take(viewer, 'viewer-refused');
    });
  });
});
