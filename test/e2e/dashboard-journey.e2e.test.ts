// The dashboard's setup journey in a real browser (Debian's chromium through playwright-core),
// against the whole stack as the other e2e tests start it, in the order the product gives: sign
// up, prove the address by the link mailed to it, turn on two-factor authentication, create an
// instance and pair it (on the simulator's phone page), create an API key and send with it, point
// the webhook at a receiver and resend a delivery. One test, as a customer goes through it; every
// page is saved as a screenshot (.run/test-results/screenshots/dashboard-journey/), desktop and,
// for some, a phone's width. Recovery (a forgotten password, a new authenticator) is
// dashboard-recovery.e2e.test.ts.
import type { Page } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';
import { sql, z } from '@gw/db';
import { OPEN_LIMITS, unusedTotpCode, withOperator } from '../support/accounts.ts';
import { Screenshots, totpCode, useBrowser } from '../support/browser.ts';
import { linkIn } from '../support/mail-catcher.ts';
import { send } from '../support/http.ts';
import { useStack } from '../support/suite.ts';
import { setLimits, setPlan } from '../../services/gatewayctl/src/policy/commands.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../../services/instance-simulator/src/testing/webhook-receiver.ts';

// The customer's receiver listens on 127.0.0.1, which webhooks may reach only when allowed; and
// retries in seconds rather than hours, as in webhooks.e2e.test.ts.
const ENV = { WEBHOOK_ALLOW_CIDRS: '127.0.0.0/8', WEBHOOK_RETRY_DELAYS_MS: '0,500,1000', WEBHOOK_RETRY_JITTER: '0', WEBHOOK_POLL_MS: '100' };
const suite = useStack({ services: ['api', 'policy', 'delivery', 'instance-events', 'webhooks'], env: ENV });
const browser = useBrowser();
let receiver: WebhookReceiver | undefined;

afterAll(async () => {
  await receiver?.close();
});

describe('the dashboard, in a browser', () => {
  it('a new customer signs up with two-factor authentication, pairs an instance, sends with a new API key and resends a webhook delivery', async () => {
    const shots = new Screenshots('dashboard-journey');
    const page = await browser.session.open('desktop');
    try {
      await journey(page, shots);
    } catch (error) {
      // The page as it was when the journey stopped, beside the others.
      await shots.take(page, 'failed-here').catch(() => undefined);
      throw error;
    } finally {
      await page.close();
    }
  });
});

async function journey(page: Page, shots: Screenshots): Promise<void> {
  const base = suite.stack.apiUrl;

  // a. The landing page (a browser's Accept asks for HTML), then sign-up and MFA enrolment.
  await page.goto(`${base}/`);
  await page.getByRole('heading', { level: 1, name: /Guarded messaging/ }).waitFor();
  await shots.take(page, 'landing');
  await shots.takeNarrow(page, 'landing');

  await page.getByRole('link', { name: 'Create an account' }).click();
  await page.getByRole('heading', { name: 'Create an account' }).waitFor();
  const email = `owner-${Date.now().toString(36)}@clinic.example`;
  const password = 'correct horse battery staple';
  await page.getByLabel('Organisation').fill('Acme Clinic');
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await shots.take(page, 'sign-up');
  await shots.takeNarrow(page, 'sign-up');
  await page.getByRole('button', { name: 'Create account' }).click();

  // Sign-up signs nobody in: it asks to prove the address first, by the link in a mail (read from
  // the stack's mail catcher, as its owner reads the inbox), confirmed with a button.
  await page.getByRole('heading', { level: 1, name: 'Check your inbox' }).waitFor();
  expect(new URL(page.url()).pathname).toBe('/verify-email');
  await shots.take(page, 'check-your-inbox');
  await shots.takeNarrow(page, 'check-your-inbox');
  const verification = await suite.stack.mail.waitFor(email, /^Confirm your email address$/);
  const link = linkIn(verification, '/verify-email/');
  expect(new URL(link).origin, 'the link leads to this dashboard').toBe(new URL(base).origin);
  await page.goto(link);
  await page.getByRole('heading', { level: 1, name: 'Confirm your email address' }).waitFor();
  await shots.take(page, 'confirm-email');
  await page.getByRole('button', { name: 'Confirm my email address' }).click();
  // Confirmed: the organisation exists now; the owner signs in and goes on to two-factor set-up.
  await page.getByText('Your email address is confirmed. Sign in to continue.').waitFor();
  await shots.take(page, 'email-confirmed-sign-in');
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();

  await page.getByRole('heading', { name: 'Two-factor authentication' }).waitFor();
  expect(new URL(page.url()).pathname).toBe('/account/mfa');
  const secret = (await page.locator('#totp-secret').textContent())!.trim();
  expect(secret).toMatch(/^[A-Z2-7]{16,}$/);
  await shots.take(page, 'mfa-enrolment');
  await page.getByLabel('Code from the app').fill(await totpCode(secret));
  await page.getByRole('button', { name: 'Turn on' }).click();

  await page.getByRole('heading', { name: 'Your recovery codes' }).waitFor();
  expect(await page.locator('#recovery-codes li').count()).toBe(10);
  await shots.take(page, 'recovery-codes');

  // The operator's part, outside the dashboard: a plan (a new customer has none, and the policy
  // refuses sends without one), its limits raised as a manual review would.
  const customerId = await suite.db.oneFirst(sql.type(z.object({ customer_id: z.string() }))`
    SELECT m.customer_id FROM memberships m JOIN users u ON u.id = m.user_id WHERE u.email = ${email}`);
  await withOperator(suite.stack, async ({ pool, facts }) => {
    await setPlan(pool, facts, { customerId, plan: 'growth', by: 'test-operator', reason: 'dashboard journey' });
    await setLimits(pool, facts, { ...OPEN_LIMITS, customerId });
  });

  // b. Create an instance, see its QR code, pair it on the simulator's phone page, and watch the
  // manage page turn connected by itself (it polls).
  await page.getByRole('link', { name: 'Continue to your dashboard' }).click();
  await page.getByRole('heading', { level: 1, name: 'Instances' }).waitFor();
  await page.getByRole('heading', { name: 'No instances yet' }).waitFor();
  await shots.take(page, 'instances-empty');
  await page.getByLabel('Name', { exact: true }).fill('front-desk');
  await page.getByRole('button', { name: 'Create instance' }).click();

  await page.getByRole('heading', { level: 1, name: 'front-desk' }).waitFor();
  const instanceId = (await page.locator('#instance-id').textContent())!.trim();
  expect(instanceId).toMatch(/^ins_/);
  expect(new URL(page.url()).pathname).toBe(`/instances/${instanceId}/manage`);
  const qr = page.getByRole('img', { name: 'QR code to link a phone to front-desk' });
  if (!(await qr.isVisible())) await page.getByRole('button', { name: 'Link a phone' }).click();
  await qr.waitFor();
  expect(await qr.getAttribute('src')).toMatch(/^data:image\/png;base64,/);
  expect(await page.locator('#connection-state').textContent()).toBe('Waiting for a phone to link');
  await shots.take(page, 'instance-qr');
  await shots.takeNarrow(page, 'instance-qr');
  // Set in this page's window: still there after the pairing shows it was not reloaded.
  await page.evaluate(() => Object.assign(window, { journeyMarker: 'not reloaded' }));

  const managerInstance = await suite.db.oneFirst(sql.type(z.object({ manager_instance: z.string() }))`
    SELECT manager_instance FROM instances WHERE id = ${instanceId}`);
  const phone = await browser.session.open('narrow');
  await phone.goto(`${suite.stack.simulator.baseUrl}/sim/instances/${encodeURIComponent(managerInstance)}/phone`);
  await phone.getByPlaceholder('SIM_GLOBAL_API_KEY').fill(suite.stack.simulator.globalKey);
  await phone.getByRole('button', { name: 'Use', exact: true }).click();
  await phone.getByRole('img', { name: 'QR code' }).waitFor();
  await shots.take(phone, 'simulator-phone-qr');
  await phone.getByRole('button', { name: 'Scan (pair)' }).click();
  await phone.getByText(/^Linked as /).waitFor();
  expect(await phone.locator('#state').textContent()).toBe('open');
  await shots.take(phone, 'simulator-phone-linked');
  await phone.close();

  await page.bringToFront();
  await page.locator('#connection-state').getByText('Connected', { exact: true }).waitFor({ timeout: 20_000 });
  expect(await page.evaluate(() => (window as unknown as { journeyMarker?: string }).journeyMarker)).toBe('not reloaded');
  expect(await qr.isVisible()).toBe(false);
  await page.getByRole('button', { name: 'Disconnect the phone' }).waitFor();
  await shots.take(page, 'instance-connected');
  await shots.takeNarrow(page, 'instance-connected');

  await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'Instances' }).click();
  await page.getByRole('table').getByText('Connected', { exact: true }).waitFor();
  await shots.take(page, 'instances-list');

  // c. An API key (the form asks for a code again), read from the page once, and a first send with it.
  await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'API keys' }).click();
  await page.getByRole('heading', { level: 1, name: 'API keys' }).waitFor();
  await page.getByRole('heading', { name: 'No API keys yet' }).waitFor();
  await shots.take(page, 'api-keys-empty');
  await page.getByLabel('Name', { exact: true }).fill('booking system');
  // Each code works once: the enrolment's may still be the current one, so a fresh period's code.
  const keyCode = await unusedTotpCode(suite.stack, email, secret);
  await page.getByLabel('Your authenticator code').fill(keyCode);
  await page.getByRole('button', { name: 'Create key' }).click();
  await page.getByRole('heading', { name: /Your new key/ }).waitFor();
  const apiKey = (await page.locator('#new-api-key').textContent())!.trim();
  expect(apiKey).toMatch(/^gw_/);
  await shots.take(page, 'api-key-created');
  // Opened again (a GET: a reload would post the form again), the page lists the key but never shows it.
  await page.goto(`${base}/api-keys`);
  await page.getByRole('heading', { level: 1, name: 'API keys' }).waitFor();
  expect(await page.content(), 'the key is shown only once').not.toContain(apiKey);
  expect(await page.getByRole('row', { name: /booking system/ }).count()).toBe(1);
  await shots.take(page, 'api-keys-list');

  const first = await send(base, apiKey, { instance_id: instanceId, phone: '+14155552671', message: 'Your appointment is confirmed for 10:00 tomorrow.', message_purpose: 'transactional' });
  expect(first.status, JSON.stringify(first.body)).toBe(200);
  expect(first.body).toMatchObject({ success: true, status: 'sent' });

  // d. The webhook tab: point it at a local receiver, send again, see the delivery in the log,
  // and resend it: the receiver gets it a second time.
  receiver = await startWebhookReceiver();
  await page.goto(`${base}/instances/${instanceId}/manage?tab=webhook`);
  await page.getByRole('heading', { name: 'Set up the webhook' }).waitFor();
  await shots.take(page, 'webhook-none');
  await page.getByLabel('Destination URL').fill(`${receiver.url}/hooks/chat`);
  await page.getByRole('checkbox', { name: 'message.sent' }).check();
  await page.getByRole('checkbox', { name: 'message.failed' }).check();
  // A destination asks for a code again (step-up), and a code works once: the API key's code is
  // refused, the form kept, and it says why.
  await page.getByLabel(/Your authenticator code/).fill(keyCode);
  await page.getByRole('button', { name: 'Save', exact: true }).click();
  await page.locator('#webhook-error').getByText(/Each code works once/).waitFor();
  expect(await page.getByLabel('Destination URL').inputValue()).toBe(`${receiver.url}/hooks/chat`);
  expect(await page.getByRole('checkbox', { name: 'message.failed' }).isChecked()).toBe(true);
  await shots.take(page, 'webhook-code-refused');
  await page.getByLabel(/Your authenticator code/).fill(await unusedTotpCode(suite.stack, email, secret));
  await page.getByRole('button', { name: 'Save', exact: true }).click();
  await page.getByRole('heading', { name: 'Your signing secret' }).waitFor();
  expect((await page.locator('#signing-secret').textContent())!.trim()).toMatch(/^whsec_/);
  expect(await page.locator('#webhook-status').textContent()).toBe('active');
  await shots.take(page, 'webhook-saved');

  const second = await send(base, apiKey, { instance_id: instanceId, phone: '+14155552672', message: 'Your prescription is ready to collect.', message_purpose: 'transactional' });
  expect(second.status, JSON.stringify(second.body)).toBe(200);
  const sentEvent = (hook: { body: any }) => hook.body?.event === 'message.sent' && JSON.stringify(hook.body).includes('4155552672');
  const [delivered] = await receiver.waitFor(sentEvent, 1, 30_000);
  const deliveryId = String(delivered!.headers['x-chat-gateway-delivery']);

  // The log is read when the page is: reload until the delivery shows as delivered.
  const entry = page.locator(`#delivery-${deliveryId}`);
  const deadline = Date.now() + 30_000;
  await page.goto(`${base}/instances/${instanceId}/manage?tab=webhook`);
  while (!(await entry.getByText('delivered', { exact: true }).first().isVisible())) {
    if (Date.now() > deadline) throw new Error(`delivery ${deliveryId} did not show as delivered in the log`);
    await page.waitForTimeout(500);
    await page.reload();
  }
  await page.getByRole('heading', { name: 'Deliveries' }).waitFor();
  await shots.take(page, 'webhook-deliveries');
  await entry.getByRole('button', { name: 'Resend' }).click();
  await page.waitForURL(/[?&]done=webhook_resent/);
  await page.getByRole('heading', { name: 'Deliveries' }).waitFor();
  await shots.take(page, 'webhook-resent');
  const again = await receiver.waitFor((hook) => sentEvent(hook) && hook.headers['x-chat-gateway-delivery'] === deliveryId, 2, 30_000);
  expect(again).toHaveLength(2);
  expect(again[1]!.raw.equals(again[0]!.raw), 'the same event, body for body').toBe(true);
}
