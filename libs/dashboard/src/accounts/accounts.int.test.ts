import { describe, expect, it } from 'vitest';
import { sql, z } from '@gw/db';
import { useApiFixture } from '../../../../test/support/api/api-fixture.ts';
import { field, PageClient, signUpWithMfa, textOf, totpNow, verifyEmail } from '../../../../test/support/dashboard/page-client.ts';

// Sign-up, MFA, sign-in, lockout, sessions and CSRF, in-process over real Postgres and Kafka.
const suite = useApiFixture();
const app = () => suite.fixture.app;
const pool = () => suite.fixture.runtime.pool;
const uniqueEmail = () => `user-${Math.random().toString(36).slice(2)}@example.test`;

describe('sign-up', () => {
  it('mails a link; following it creates the organisation (its CustomerRegistered fact first) and its owner, who signs in and is sent to MFA enrolment', async () => {
    const client = new PageClient(app());
    const email = uniqueEmail();
    const page = await client.submit('/sign-up', '/sign-up', { organisation: 'Acme Clinics', email, password: 'correct horse battery' });
    expect(page.status).toBe(303);
    expect(page.location).toBe('/verify-email?sent=1');
    // Nothing exists for the address but the unverified user until the link is followed.
    expect(await pool().maybeOne(sql.type(z.object({ customer_id: z.string() }))`SELECT m.customer_id FROM users u JOIN memberships m ON m.user_id = u.id WHERE u.email = ${email}`)).toBeNull();
    expect((await verifyEmail(client, email)).location).toBe('/sign-in?verified=1&next=%2Faccount%2Fmfa');
    const signIn = await client.submit('/sign-in?verified=1', '/sign-in', { email, password: 'correct horse battery', next: '/account/mfa' });
    expect(signIn.location).toBe('/account/mfa');
    const cookie = signIn.response.cookies.find((c) => c.name === 'gw_session')!;
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/' });
    expect(cookie.expires).toBeUndefined();
    const row = await pool().one(sql.type(z.object({ customer_id: z.string(), role: z.string(), name: z.string(), password_hash: z.string() }))`
      SELECT m.customer_id, m.role, c.name, u.password_hash FROM users u JOIN memberships m ON m.user_id = u.id JOIN customers c ON c.id = m.customer_id WHERE u.email = ${email}`);
    expect(row).toMatchObject({ role: 'owner', name: 'Acme Clinics' });
    expect(row.password_hash).toMatch(/^\$argon2id\$/);
    const fact = await suite.fixture.record((r) => r.event.type === 'PolicyInputRecorded' && r.event.payload.customer_id === row.customer_id, 'the CustomerRegistered fact');
    expect(fact.event.type === 'PolicyInputRecorded' && fact.event.payload.input_type).toBe('CustomerRegistered');
    const plan = await suite.fixture.record((r) => r.event.type === 'PolicyInputRecorded' && r.event.payload.customer_id === row.customer_id && r.event.payload.input_type === 'PlanChanged', 'the sign-up plan');
    expect(plan.event.type === 'PolicyInputRecorded' && JSON.parse(plan.event.payload.payload)).toMatchObject({ planId: 'starter', by: email });
    const audit = await suite.fixture.record((r) => r.event.type === 'AccountChanged' && r.event.payload.customer_id === row.customer_id, 'the audit event');
    expect(audit.event.payload).toMatchObject({ action: 'customer.created', by: email, via: 'dashboard' });
    expect((await client.get('/account')).html).toContain(email);
  });

  it('refuses a password under 12 characters and a missing organisation, saying why', async () => {
    const client = new PageClient(app());
    const short = await client.submit('/sign-up', '/sign-up', { organisation: 'A', email: uniqueEmail(), password: 'elevenchars' });
    expect(short.status).toBe(400);
    expect(short.html).toContain('Use at least 12 characters.');
    const nameless = await new PageClient(app()).submit('/sign-up', '/sign-up', { organisation: '  ', email: uniqueEmail(), password: 'correct horse battery' });
    expect(nameless.html).toContain('Give your organisation a name.');
  });
});

describe('CSRF', () => {
  it('refuses a form without its token, or with a token of another session, with 403', async () => {
    const client = new PageClient(app());
    const missing = await client.submit('/sign-up', '/sign-up', { organisation: 'X', email: uniqueEmail(), password: 'correct horse battery' }, { csrf: null });
    expect(missing.status).toBe(403);
    expect(missing.html).toContain('Form expired');
    const { client: owner } = await signUpWithMfa(app());
    const other = await signUpWithMfa(app());
    const foreignToken = field((await other.client.get('/account')).html, '_csrf')!;
    const refused = await owner.submit('/account', '/account/sign-out-everywhere', {}, { csrf: foreignToken });
    expect(refused.status).toBe(403);
    expect((await owner.get('/account')).status).toBe(200);
  });
});

describe('MFA and sign-in', () => {
  it('enrols with a TOTP code, shows ten recovery codes once, and moves the session to a new id', async () => {
    const client = new PageClient(app());
    const email = uniqueEmail();
    await client.submit('/sign-up', '/sign-up', { organisation: 'Acme', email, password: 'correct horse battery' });
    await verifyEmail(client, email);
    await client.submit('/sign-in', '/sign-in', { email, password: 'correct horse battery' });
    const before = client.cookies.get('gw_session');
    const enrol = await client.get('/account/mfa');
    expect(enrol.html).toContain('src="data:image/png;base64,');
    const secret = textOf(enrol.html, 'totp-secret')!;
    const wrong = await client.submit('/account/mfa', '/account/mfa', { pending: field(enrol.html, 'pending')!, code: '000000' }, { csrf: field(enrol.html, '_csrf') });
    expect(wrong.status).toBe(400);
    const done = await client.submit('/account/mfa', '/account/mfa', { pending: field(wrong.html, 'pending')!, code: await totpNow(secret) }, { csrf: field(wrong.html, '_csrf') });
    expect(done.status).toBe(200);
    expect([...done.html.matchAll(/<li><code>/g)]).toHaveLength(10);
    expect(client.cookies.get('gw_session')).not.toBe(before);
    const stale = new PageClient(app());
    stale.cookies.set('gw_session', before!);
    expect((await stale.get('/account')).status).toBe(303);
    expect((await client.get('/account/mfa')).html).not.toContain('<li><code>');
  });

  it('signs in with the password, then a code (or a recovery code, once)', async () => {
    const { email, password, secret, recoveryCodes } = await signUpWithMfa(app());
    const client = new PageClient(app());
    const first = await client.submit('/sign-in', '/sign-in', { email, password, next: '/account' });
    expect(first.status).toBe(303);
    expect(first.location).toBe('/sign-in/code?next=%2Faccount');
    expect((await client.get('/account')).location).toBe('/sign-in/code');
    const code = await client.submit('/sign-in/code', '/sign-in/code', { code: await totpNow(secret), next: '/account' });
    expect(code.location).toBe('/account');
    expect((await client.get('/account')).status).toBe(200);

    const recovery = new PageClient(app());
    await recovery.submit('/sign-in', '/sign-in', { email, password });
    expect((await recovery.submit('/sign-in/code', '/sign-in/code', { code: recoveryCodes[0]! })).status).toBe(303);
    const again = new PageClient(app());
    await again.submit('/sign-in', '/sign-in', { email, password });
    expect((await again.submit('/sign-in/code', '/sign-in/code', { code: recoveryCodes[0]! })).status).toBe(401);
  });

  it('never sends anyone to another site after sign-in', async () => {
    const { email, password, secret } = await signUpWithMfa(app());
    const client = new PageClient(app());
    await client.submit('/sign-in', '/sign-in', { email, password, next: '//evil.example/x' });
    const done = await client.submit('/sign-in/code', '/sign-in/code', { code: await totpNow(secret), next: 'https://evil.example/' });
    expect(done.location).toBe('/instances');
  });
});

describe('lockout', () => {
  it('locks the account after five wrong passwords in a row: the right one is refused too, until the lock ends', async () => {
    const { email, password } = await signUpWithMfa(app());
    const client = new PageClient(app());
    for (let i = 0; i < 5; i++) expect((await client.submit('/sign-in', '/sign-in', { email, password: `wrong password ${i}` })).status).toBe(401);
    const locked = await client.submit('/sign-in', '/sign-in', { email, password });
    // The same answer as a wrong password (and an unknown address), naming the lock as a possibility.
    expect(locked.status).toBe(401);
    expect(locked.html).toContain('locked after 5 wrong attempts');
    await pool().query(sql.typeAlias('void')`UPDATE users SET locked_until = now() - interval '1 second' WHERE email = ${email}`);
    expect((await client.submit('/sign-in', '/sign-in', { email, password })).status).toBe(303);
  });

  it('answers a wrong password for an unknown email as for a known one', async () => {
    const page = await new PageClient(app()).submit('/sign-in', '/sign-in', { email: uniqueEmail(), password: 'whatever password' });
    expect(page.status).toBe(401);
    expect(page.html).toContain('The email or password is wrong');
  });
});

describe('sessions', () => {
  it('end after the idle timeout: the next page goes to sign-in, which says so', async () => {
    const shortLived = await suite.fixture.build({ dashboard: { sessionIdleMs: 300 } });
    try {
      const { client } = await signUpWithMfa(shortLived);
      expect((await client.get('/account')).status).toBe(200);
      await new Promise((r) => setTimeout(r, 700));
      const page = await client.get('/account');
      expect(page.status).toBe(303);
      expect(page.location).toBe('/sign-in?next=%2Faccount&ended=1');
      expect((await client.get(page.location!)).html).toContain('Your session ended.');
    } finally {
      await shortLived.close();
    }
  });

  it('end after the absolute timeout however busy', async () => {
    const shortLived = await suite.fixture.build({ dashboard: { sessionAbsoluteMs: 500 } });
    try {
      const { client } = await signUpWithMfa(shortLived);
      await new Promise((r) => setTimeout(r, 700));
      expect((await client.get('/account')).location).toContain('ended=1');
    } finally {
      await shortLived.close();
    }
  });

  it('all end with "sign out everywhere"', async () => {
    const { client, email, password, secret } = await signUpWithMfa(app());
    const laptop = new PageClient(app());
    await laptop.submit('/sign-in', '/sign-in', { email, password });
    await laptop.submit('/sign-in/code', '/sign-in/code', { code: await totpNow(secret) });
    expect((await laptop.get('/account')).status).toBe(200);
    const out = await client.submit('/account', '/account/sign-out-everywhere', {});
    expect(out.location).toBe('/sign-in?signed_out=1');
    expect((await laptop.get('/account')).status).toBe(303);
    expect((await client.get('/account')).status).toBe(303);
  });
});

describe('pages', () => {
  it('carry a strict CSP that forbids framing, and GET / keeps its JSON for tools', async () => {
    const page = await new PageClient(app()).get('/');
    expect(page.status).toBe(200);
    expect(page.html).toContain('Create an account');
    const csp = String(page.response.headers['content-security-policy']);
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    const tool = await app().inject({ method: 'GET', url: '/' });
    expect(tool.json()).toEqual({ service: 'chat-gateway', status: 'ok', contract: '/openapi.json' });
  });
});
