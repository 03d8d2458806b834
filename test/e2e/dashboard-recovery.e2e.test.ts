// Getting back into the dashboard, in a real browser (Debian's chromium through playwright-core):
// a forgotten password reset by the link mailed to the owner (read from the stack's mail catcher,
// as its owner reads the inbox) and a code of the second factor, which ends every session; and the
// second factor replaced with a code of the current one, after which the old authenticator no
// longer signs in and the other sessions are ended. A second browser (the owner's laptop) holds
// the session that must end. Screenshots: .run/test-results/screenshots/<test>/.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPool } from '@gw/db';
import { SecretBox } from '@gw/security';
import { addMembership, createUser, hashPassword, newRecoveryCodes, newTotpSecret, saveEnrolment } from '@gw/dashboard/seeding';
import { demoAccount, unusedTotpCode } from '../support/accounts.ts';
import { launchBrowser, Screenshots, totpCode, useBrowser, type BrowserSession } from '../support/browser.ts';
import { linkIn } from '../support/mail-catcher.ts';
import { useStack } from '../support/suite.ts';

// Only the API: it serves every page and sends the mail.
const suite = useStack({ services: ['api'] });
const browser = useBrowser();
let laptop: BrowserSession | undefined;

interface Owner {
  email: string;
  password: string;
  secret: string;
}

let customerId: string;

beforeAll(async () => {
  customerId = (await demoAccount(suite.stack, {})).customer_id;
  laptop = await launchBrowser();
}, 120_000);

afterAll(async () => {
  await laptop?.close();
});

/** An owner of the demo customer, address proved and two-factor authentication on, as sign-up and enrolment leave one. */
async function owner(name: string): Promise<Owner> {
  const pool = await createPool(suite.stack.isolation.databaseUrl, { maxConnections: 1 });
  try {
    const email = `${name}-${Date.now().toString(36)}@clinic.example`;
    const password = 'the first long password';
    const userId = await createUser(pool, email, await hashPassword(password), { verified: true });
    await addMembership(pool, userId, customerId, 'owner');
    const secret = newTotpSecret();
    await saveEnrolment(pool, new SecretBox(suite.stack.env.GATEWAY_SECRET_KEY!), userId, secret, newRecoveryCodes());
    return { email, password, secret };
  } finally {
    await pool.end();
  }
}

/** Signs in through the sign-in pages (password, then a fresh code of `secret`) and waits for the dashboard. */
async function signIn(page: Page, who: { email: string }, password: string, secret: string): Promise<void> {
  await page.goto(`${suite.stack.apiUrl}/sign-in`);
  await page.getByLabel('Email').fill(who.email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByLabel('Code').fill(await unusedTotpCode(suite.stack, who.email, secret));
  await page.getByRole('button', { name: 'Continue' }).click();
  await page.getByRole('heading', { level: 1, name: 'Instances' }).waitFor();
}

/** The laptop's session still works: its account page opens (true), or it is sent to sign in (false). */
async function stillSignedIn(page: Page): Promise<boolean> {
  await page.goto(`${suite.stack.apiUrl}/account`);
  await page.getByRole('heading', { level: 1 }).first().waitFor();
  return new URL(page.url()).pathname === '/account';
}

/** Runs a browser test, saving each page as it was if it fails. */
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

describe('getting back in, in a browser', () => {
  it('a forgotten password is reset by the mailed link and a code of the second factor; every session ends', async () => {
    const who = await owner('forgetful');
    const shots = new Screenshots('dashboard-recovery-password');
    await browser.session.context.clearCookies();
    const page = await browser.session.open('desktop');
    const other = await laptop!.open('desktop');
    await inBrowser(shots, [page, other], async () => {
      await signIn(other, who, who.password, who.secret);
      expect(await stillSignedIn(other)).toBe(true);

      // The request: the same answer whether or not the address has an account.
      await page.goto(`${suite.stack.apiUrl}/sign-in`);
      await page.getByRole('link', { name: 'Forgot your password?' }).click();
      await page.getByRole('heading', { level: 1, name: 'Reset your password' }).waitFor();
      await page.getByLabel('Email').fill(who.email);
      await shots.take(page, 'forgot-password');
      const asked = Date.now();
      await page.getByRole('button', { name: 'Send the link' }).click();
      await page.getByRole('status').getByText(/a link to choose a new password is on its way/).waitFor();
      await shots.take(page, 'reset-link-sent');
      await shots.takeNarrow(page, 'reset-link-sent');

      // The mail's link, opened in the browser: a new password, and a code of the second factor.
      const mail = await suite.stack.mail.waitFor(who.email, /^Reset your password$/, { after: asked });
      expect(mail.text).toMatch(/authenticator app, or a recovery code/);
      const link = linkIn(mail, '/reset-password/');
      expect(new URL(link).origin, 'the link leads to this dashboard').toBe(new URL(suite.stack.apiUrl).origin);
      await page.goto(link);
      await page.getByRole('heading', { level: 1, name: 'Choose a new password' }).waitFor();
      await shots.take(page, 'choose-new-password');
      const newPassword = 'a second long password';
      await page.getByLabel(/New password/).fill(newPassword);
      await page.getByLabel(/Code from your authenticator app/).fill('000000');
      await page.getByRole('button', { name: 'Set the new password' }).click();
      // A wrong code changes nothing, and the link still works.
      await page.getByRole('alert').getByText(/That code is not right/).waitFor();
      await shots.take(page, 'reset-code-refused');
      expect(await stillSignedIn(other), 'a refused reset ends no session').toBe(true);
      await page.getByLabel(/New password/).fill(newPassword);
      await page.getByLabel(/Code from your authenticator app/).fill(await unusedTotpCode(suite.stack, who.email, who.secret));
      await page.getByRole('button', { name: 'Set the new password' }).click();

      await page.getByRole('status').getByText('Your password is changed and every session ended. Sign in with the new password.').waitFor();
      expect(new URL(page.url()).pathname).toBe('/sign-in');
      await shots.take(page, 'password-reset-sign-in');
      await suite.stack.mail.waitFor(who.email, /^Your password was reset$/, { after: asked });

      // Every session ended: the laptop is sent to sign in. The link works once.
      expect(await stillSignedIn(other), 'the other session ended').toBe(false);
      await shots.take(other, 'laptop-signed-out');
      await page.goto(link);
      await page.getByRole('heading', { level: 1, name: 'Link expired' }).waitFor();
      await shots.take(page, 'reset-link-used');

      // The old password no longer signs in; the new one (with a code) does.
      await page.goto(`${suite.stack.apiUrl}/sign-in`);
      await page.getByLabel('Email').fill(who.email);
      await page.getByLabel('Password').fill(who.password);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('alert').getByText(/The email or password is wrong/).waitFor();
      await signIn(page, who, newPassword, who.secret);
    });
  });

  it('the second factor is replaced with a code of the current one: the old authenticator stops working and other sessions end', async () => {
    const who = await owner('new-phone');
    const shots = new Screenshots('dashboard-recovery-second-factor');
    await browser.session.context.clearCookies();
    const page = await browser.session.open('desktop');
    const other = await laptop!.open('desktop');
    await inBrowser(shots, [page, other], async () => {
      await signIn(other, who, who.password, who.secret);
      await signIn(page, who, who.password, who.secret);

      // The account page: both sessions listed, this one marked.
      await page.goto(`${suite.stack.apiUrl}/account`);
      await page.getByRole('heading', { level: 1, name: 'Your account' }).waitFor();
      // Named as a person would name them (the raw User-Agent is only the row's title).
      expect(await page.locator('#sessions tbody tr').count()).toBe(2);
      expect(await page.locator('#sessions tr.current td').first().textContent()).toMatch(/^Chrome on Linux \(this session\)$/);
      await shots.take(page, 'account');
      await shots.takeNarrow(page, 'account');

      await page.goto(`${suite.stack.apiUrl}/account/mfa`);
      await page.getByRole('heading', { level: 1, name: 'Two-factor authentication' }).waitFor();
      await shots.take(page, 'mfa-on');
      await page.getByRole('link', { name: 'replace your second factor' }).click();
      await page.getByRole('heading', { level: 1, name: 'Replace your second factor' }).waitFor();
      expect(new URL(page.url()).search).toBe('?replace=1');
      const newSecret = (await page.locator('#totp-secret').textContent())!.trim();
      expect(newSecret).not.toBe(who.secret);
      await shots.take(page, 'mfa-replace');

      // Without a right code of the current factor nothing changes, and the same new key stays on the form.
      await page.getByLabel('Code from your current app, or a recovery code').fill('000000');
      await page.getByLabel('Code from the new app').fill(await totpCode(newSecret));
      await page.getByRole('button', { name: 'Replace the second factor' }).click();
      await page.getByRole('alert').getByText(/A code of your current second factor is needed/).waitFor();
      expect((await page.locator('#totp-secret').textContent())!.trim()).toBe(newSecret);
      await shots.take(page, 'mfa-replace-refused');
      expect(await stillSignedIn(other), 'a refused replacement ends no session').toBe(true);

      await page.getByLabel('Code from your current app, or a recovery code').fill(await unusedTotpCode(suite.stack, who.email, who.secret));
      await page.getByLabel('Code from the new app').fill(await totpCode(newSecret));
      await page.getByRole('button', { name: 'Replace the second factor' }).click();
      await page.getByRole('heading', { name: 'Your recovery codes' }).waitFor();
      await page.getByRole('status').getByText(/The old one and its recovery codes no longer work/).waitFor();
      expect(await page.locator('#recovery-codes li').count()).toBe(10);
      await shots.take(page, 'mfa-replaced');
      await suite.stack.mail.waitFor(who.email, /^Your second factor was replaced$/);

      // The other session ended; this one stays.
      expect(await stillSignedIn(other), 'the other session ended').toBe(false);
      expect(await stillSignedIn(page), 'this session stays').toBe(true);

      // Signed in again: the old authenticator's code is refused, the new one's works.
      await page.getByRole('button', { name: 'Sign out' }).first().click();
      await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();
      await page.getByLabel('Email').fill(who.email);
      await page.getByLabel('Password').fill(who.password);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByLabel('Code').fill(await unusedTotpCode(suite.stack, who.email, who.secret));
      await page.getByRole('button', { name: 'Continue' }).click();
      await page.getByRole('alert').getByText(/That code is not right/).waitFor();
      await shots.take(page, 'old-authenticator-refused');
      await page.getByLabel('Code').fill(await unusedTotpCode(suite.stack, who.email, newSecret));
      await page.getByRole('button', { name: 'Continue' }).click();
      await page.getByRole('heading', { level: 1, name: 'Instances' }).waitFor();
    });
  });
});
