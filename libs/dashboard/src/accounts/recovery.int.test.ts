import { describe, expect, it } from 'vitest';
import { sql, z } from '@gw/db';
import { linkIn } from '../../../../test/support/mail-catcher.ts';
import { useApiFixture } from '../../../../test/support/api/api-fixture.ts';
import { memberWithRole } from '../../../../test/support/dashboard/members.ts';
import { field, PageClient, signUpWithMfa, totpNow, verifyEmail } from '../../../../test/support/dashboard/page-client.ts';

// Verification, same answers, password reset and change, sessions and security notices, in
// process over real Postgres and Kafka; every mail is read from the mail catcher (maildev) over
// its REST API, as its owner would read it.
const suite = useApiFixture();
const app = () => suite.fixture.app;
const pool = () => suite.fixture.runtime.pool;
const mail = () => suite.fixture.mail;
const uniqueEmail = () => `rec-${Math.random().toString(36).slice(2)}@example.test`;
const PASSWORD = 'correct horse battery';
const pathOf = (url: string) => new URL(url).pathname;

describe('sign-up verification', () => {
  it('gates an unverified account: every page goes to "check your inbox", every form is refused, until the link is followed', async () => {
    const email = uniqueEmail();
    const client = new PageClient(app());
    await client.submit('/sign-up', '/sign-up', { organisation: 'Gate Ltd', email, password: PASSWORD });
    const signedIn = await client.submit('/sign-in', '/sign-in', { email, password: PASSWORD });
    expect(signedIn.status).toBe(303);
    for (const page of ['/account', '/account/mfa', '/instances', '/api-keys']) expect((await client.get(page)).location).toBe('/verify-email');
    expect((await client.submit('/verify-email', '/account/password', { current_password: PASSWORD, password: 'another long password' })).status).toBe(403);
    const inbox = await client.get('/verify-email');
    expect(inbox.html).toContain(email);
    // Asking again sends a new link; only the newest one works.
    const first = await mail().waitFor(email, /Confirm your email address/);
    const resent = await client.submit('/verify-email', '/verify-email/resend', {});
    expect(resent.status).toBe(200);
    await new Promise((r) => setTimeout(r, 1100));
    const second = (await mail().inbox(email)).filter((m) => /Confirm/.test(m.subject));
    expect(second.length).toBeGreaterThanOrEqual(2);
    expect((await client.get(pathOf(linkIn(first, '/verify-email/')))).status).toBe(404);
    const confirmed = await verifyEmail(client, email);
    expect(confirmed.location).toBe('/account/mfa');
    expect((await client.get('/account/mfa')).status).toBe(200);
    // The link worked once.
    const again = pathOf(linkIn(await mail().waitFor(email, /Confirm your email address/), '/verify-email/'));
    expect((await new PageClient(app()).get(again)).status).toBe(404);
  });

  it('answers an address that has an account exactly as a new one, and mails its owner a notice instead of a link', async () => {
    const { email } = await signUpWithMfa(app());
    const fresh = await new PageClient(app()).submit('/sign-up', '/sign-up', { organisation: 'New Co', email: uniqueEmail(), password: PASSWORD });
    const taken = await new PageClient(app()).submit('/sign-up', '/sign-up', { organisation: 'Squatter', email: email.toUpperCase(), password: 'a different password' });
    expect(taken.status).toBe(fresh.status);
    expect(taken.location).toBe(fresh.location);
    expect(taken.response.cookies).toEqual(fresh.response.cookies);
    const notice = await mail().waitFor(email, /Someone tried to sign up with your address/);
    expect(notice.text).toContain('https://gateway.test/forgot-password');
    expect((await mail().inbox(email)).filter((m) => /Confirm your email/.test(m.subject))).toHaveLength(1);
    expect(await pool().oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM customers WHERE name = 'Squatter'`)).toBe(0);
  });

  it('counts users made without it (before the migration, or by other tools) as verified', async () => {
    const email = uniqueEmail();
    const { hashPassword } = await import('./passwords.ts');
    // As the INSERT before 1700000002700 wrote it: no email_verified_at given.
    await pool().query(sql.typeAlias('void')`INSERT INTO users (id, email, password_hash) VALUES (${`usr_old_${Date.now()}`}, ${email}, ${await hashPassword(PASSWORD)})`);
    const client = new PageClient(app());
    await client.submit('/sign-in', '/sign-in', { email, password: PASSWORD });
    expect((await client.get('/account')).status).toBe(200);
  });
});

describe('password reset', () => {
  const requestReset = async (email: string) => {
    const page = await new PageClient(app()).submit('/forgot-password', '/forgot-password', { email });
    return page;
  };

  it('answers the same whether the address exists, and mails a single-use link that ends every session', async () => {
    const email = uniqueEmail();
    const client = new PageClient(app());
    await client.submit('/sign-up', '/sign-up', { organisation: 'Reset Ltd', email, password: PASSWORD });
    await verifyEmail(client, email);
    await client.submit('/sign-in', '/sign-in', { email, password: PASSWORD });
    expect((await client.get('/account/mfa')).status).toBe(200);
    const unknown = await requestReset(uniqueEmail());
    const known = await requestReset(email);
    expect([known.status, known.html.replace(/value="[^"]*"/g, '')]).toEqual([unknown.status, unknown.html.replace(/value="[^"]*"/g, '')]);
    const link = pathOf(linkIn(await mail().waitFor(email, /Reset your password/), '/reset-password/'));
    const page = await new PageClient(app()).get(link);
    expect(page.html).not.toContain('name="code"');
    const done = await new PageClient(app()).submit(link, link, { password: 'a brand new password' });
    expect(done.location).toBe('/sign-in?reset=1');
    expect((await client.get('/account/mfa')).status).toBe(303);
    expect((await new PageClient(app()).submit('/sign-in', '/sign-in', { email, password: PASSWORD })).status).toBe(401);
    expect((await new PageClient(app()).submit('/sign-in', '/sign-in', { email, password: 'a brand new password' })).status).toBe(303);
    expect((await new PageClient(app()).get(link)).status).toBe(404);
    expect((await mail().waitFor(email, /Your password was reset/)).text).toContain('Every session of the account was ended');
  });

  it('refuses an expired link', async () => {
    const { email } = await signUpWithMfa(app());
    await requestReset(email);
    const link = pathOf(linkIn(await mail().waitFor(email, /Reset your password/), '/reset-password/'));
    await pool().query(sql.typeAlias('void')`UPDATE email_tokens SET expires_at = now() - interval '1 second' WHERE purpose = 'reset_password' AND used_at IS NULL AND user_id = (SELECT id FROM users WHERE email = ${email})`);
    expect((await new PageClient(app()).get(link)).status).toBe(404);
  });

  it('asks for a code of the second factor when MFA is on, before the new password takes effect', async () => {
    const { email, secret, recoveryCodes } = await signUpWithMfa(app());
    await requestReset(email);
    const link = pathOf(linkIn(await mail().waitFor(email, /Reset your password/), '/reset-password/'));
    const client = new PageClient(app());
    expect((await client.get(link)).html).toContain('name="code"');
    const noCode = await client.submit(link, link, { password: 'a brand new password', code: '' });
    expect(noCode.status).toBe(400);
    const wrong = await client.submit(link, link, { password: 'a brand new password', code: '000000' });
    expect(wrong.status).toBe(400);
    expect((await new PageClient(app()).submit('/sign-in', '/sign-in', { email, password: 'a brand new password' })).status).toBe(401);
    const done = await client.submit(link, link, { password: 'a brand new password', code: recoveryCodes[1]! });
    expect(done.location).toBe('/sign-in?reset=1');
    const signIn = new PageClient(app());
    expect((await signIn.submit('/sign-in', '/sign-in', { email, password: 'a brand new password' })).location).toContain('/sign-in/code');
    expect((await signIn.submit('/sign-in/code', '/sign-in/code', { code: await totpNow(secret) })).status).toBe(303);
  });
});

describe('password change', () => {
  it('needs the current password (counted toward the lockout), ends the other sessions and mails a notice', async () => {
    const { client, email, password, secret } = await signUpWithMfa(app());
    const laptop = new PageClient(app());
    await laptop.submit('/sign-in', '/sign-in', { email, password });
    await laptop.submit('/sign-in/code', '/sign-in/code', { code: await totpNow(secret) });
    const wrong = await client.submit('/account', '/account/password', { current_password: 'not my password', password: 'a brand new password' });
    expect(wrong.status).toBe(400);
    expect(wrong.html).toContain('current password is not right');
    expect(await pool().oneFirst(sql.type(z.object({ n: z.number() }))`SELECT failed_sign_ins AS n FROM users WHERE email = ${email}`)).toBe(1);
    const changed = await client.submit('/account', '/account/password', { current_password: password, password: 'a brand new password' });
    expect(changed.location).toBe('/account?done=password');
    expect((await client.get('/account')).status).toBe(200);
    expect((await laptop.get('/account')).status).toBe(303);
    expect((await new PageClient(app()).submit('/sign-in', '/sign-in', { email, password: 'a brand new password' })).status).toBe(303);
    await mail().waitFor(email, /Your password was changed/);
  });
});

describe('sessions', () => {
  it('are listed on the account page (this one marked) and each can be ended', async () => {
    const { client, email, password, secret } = await signUpWithMfa(app());
    const laptop = new PageClient(app());
    await laptop.submit('/sign-in', '/sign-in', { email, password });
    await laptop.submit('/sign-in/code', '/sign-in/code', { code: await totpNow(secret) });
    const page = await client.get('/account');
    const refs = [...page.html.matchAll(/action="\/account\/sessions\/([0-9a-f]{64})\/end"/g)].map((m) => m[1]!);
    expect(refs).toHaveLength(2);
    expect(page.html).toContain('(this session)');
    const other = refs.find((ref) => !new RegExp(`class="current"[\\s\\S]*?${ref}`).test(page.html.slice(page.html.indexOf('class="current"'), page.html.indexOf('class="current"') + 2000)))!;
    const ended = await client.post(`/account/sessions/${other}/end`, { _csrf: field(page.html, '_csrf')! });
    expect(ended.location).toBe('/account?done=session');
    expect((await laptop.get('/account')).status).toBe(303);
    expect((await client.get('/account')).status).toBe(200);
    // Another user's session is not found by its ref.
    const stranger = await signUpWithMfa(app());
    const mine = [...(await client.get('/account')).html.matchAll(/\/account\/sessions\/([0-9a-f]{64})\/end/g)].map((m) => m[1]!);
    expect((await stranger.client.submit('/account', `/account/sessions/${mine[0]}/end`, {})).status).toBe(404);
  });
});

describe('security notices', () => {
  it('are mailed for a new second factor, a new API key, a role change, a lockout and an invitation', async () => {
    const owner = await signUpWithMfa(app());
    await mail().waitFor(owner.email, /Two-factor authentication is on/);
    await owner.client.submit('/api-keys', '/api-keys', { name: 'billing system', code: await totpNow(owner.secret) });
    expect((await mail().waitFor(owner.email, /A new API key/)).text).toContain('billing system');
    const customerId = await pool().oneFirst(sql.type(z.object({ customer_id: z.string() }))`SELECT m.customer_id FROM memberships m JOIN users u ON u.id = m.user_id WHERE u.email = ${owner.email}`);
    const dev = await memberWithRole(app(), pool(), suite.fixture.box, customerId, 'developer');
    await owner.client.submit('/members', `/members/${dev.userId}/role`, { role: 'viewer', code: await totpNow(owner.secret) });
    expect((await mail().waitFor(dev.email, /Your role at/)).text).toContain('from developer to viewer');
    for (let i = 0; i < 5; i++) await new PageClient(app()).submit('/sign-in', '/sign-in', { email: dev.email, password: `wrong password ${i}` });
    await mail().waitFor(dev.email, /Your account is locked/);
    const invitee = uniqueEmail();
    const invited = await owner.client.submit('/members', '/members/invite', { email: invitee, role: 'developer', code: await totpNow(owner.secret) });
    expect(invited.status).toBe(200);
    const invitation = await mail().waitFor(invitee, /You are invited/);
    expect(linkIn(invitation, '/invites/')).toMatch(/^https:\/\/gateway\.test\/invites\/[A-Za-z0-9_-]{43}$/);
  });

  it('that cannot be sent never break the request, and say the address masked in the log', async () => {
    const lines: string[] = [];
    const { createMailer } = await import('@gw/mail');
    const { default: pino } = await import('pino');
    const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(line) });
    const broken = createMailer({ smtpUrl: 'smtp://127.0.0.1:9', from: 'x@gateway.test', logger });
    const brokenApp = await suite.fixture.build({ mailer: broken });
    try {
      const email = uniqueEmail();
      const page = await new PageClient(brokenApp).submit('/forgot-password', '/forgot-password', { email: (await signUpWithMfa(app())).email });
      expect(page.status).toBe(200);
      const signUp = await new PageClient(brokenApp).submit('/sign-up', '/sign-up', { organisation: 'Offline', email, password: PASSWORD });
      expect(signUp.location).toBe('/verify-email?sent=1');
      await broken.settled();
      const failures = lines.filter((l) => l.includes('mail not sent'));
      expect(failures.length).toBe(2);
      expect(failures.join('\n')).not.toContain(email);
      expect(failures.join('\n')).toContain('r***@e***.test');
    } finally {
      await brokenApp.close();
      await broken.close();
    }
  });
});
