import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import { generate } from 'otplib';
import { sql, z } from '@gw/db';
import { hashSecret, SEAL_USES } from '@gw/security';
import { useApiFixture } from '../../../../test/support/api/api-fixture.ts';
import { hashPassword } from './passwords.ts';
import { addMembership, createUser } from '../users.ts';
import { memberWithRole } from '../../../../test/support/dashboard/members.ts';
import { field, PageClient, signUpWithMfa, textOf, totpNow } from '../../../../test/support/dashboard/page-client.ts';
import { newRecoveryCodes, secondFactorMatches } from '../mfa/totp.ts';

// The findings of the dashboard's security review (issue 25), each as what an attacker would try.
const suite = useApiFixture();
// Its own app: this file signs in far more often than the per-address limit allows a minute.
let busy: Awaited<ReturnType<typeof suite.fixture.build>>;
beforeAll(async () => {
  busy = await suite.fixture.build({ dashboard: { signInPerMinute: 10_000 } });
});
afterAll(async () => {
  await busy?.close();
});
const app = () => busy;
const pool = () => suite.fixture.runtime.pool;
const uniqueEmail = () => `sec-${Math.random().toString(36).slice(2)}@example.test`;
const userRow = (email: string) => pool().one(sql.type(z.object({ id: z.string(), totp_secret_enc: z.string().nullable(), failed_sign_ins: z.number(), locked_until: z.date().nullable() }))`
  SELECT id, totp_secret_enc, failed_sign_ins, locked_until FROM users WHERE email = ${email}`);
const customerOf = (email: string) => pool().oneFirst(sql.type(z.object({ customer_id: z.string() }))`
  SELECT m.customer_id FROM memberships m JOIN users u ON u.id = m.user_id WHERE u.email = ${email}`);

async function signedIn(email: string, password: string, secret: string): Promise<PageClient> {
  const client = new PageClient(app());
  expect((await client.submit('/sign-in', '/sign-in', { email, password })).status).toBe(303);
  expect((await client.submit('/sign-in/code', '/sign-in/code', { code: await totpNow(secret) })).status).toBe(303);
  return client;
}

describe('replacing the second factor', () => {
  it('needs a code of the current factor: a session alone gets nowhere, even with a forged or stale form', async () => {
    const owner = await signUpWithMfa(app());
    const before = (await userRow(owner.email)).totp_secret_enc;
    const form = await owner.client.get('/account/mfa?replace=1');
    const newSecret = textOf(form.html, 'totp-secret')!;
    const noCurrent = await owner.client.submit('/account/mfa', '/account/mfa', { pending: field(form.html, 'pending')!, code: await generate({ secret: newSecret }) }, { csrf: field(form.html, '_csrf') });
    expect(noCurrent.status).toBe(400);
    expect(noCurrent.html).toContain('current second factor');
    const invalidPending = await owner.client.submit('/account/mfa', '/account/mfa', { pending: 'forged', code: '123456' });
    expect(invalidPending.status).toBe(400);
    const fresh = textOf(invalidPending.html, 'totp-secret')!;
    const withFresh = await owner.client.submit('/account/mfa', '/account/mfa', { pending: field(invalidPending.html, 'pending')!, code: await generate({ secret: fresh }) }, { csrf: field(invalidPending.html, '_csrf') });
    expect(withFresh.status).toBe(400);
    expect((await userRow(owner.email)).totp_secret_enc).toBe(before);
  });

  it('with the current code, replaces the secret and the recovery codes, and ends the other sessions', async () => {
    const owner = await signUpWithMfa(app());
    const laptop = await signedIn(owner.email, owner.password, owner.secret);
    const form = await owner.client.get('/account/mfa?replace=1');
    const newSecret = textOf(form.html, 'totp-secret')!;
    const done = await owner.client.submit('/account/mfa', '/account/mfa', { pending: field(form.html, 'pending')!, code: await generate({ secret: newSecret }), current_code: await totpNow(owner.secret) }, { csrf: field(form.html, '_csrf') });
    expect(done.status).toBe(200);
    expect([...done.html.matchAll(/<li><code>/g)]).toHaveLength(10);
    expect((await laptop.get('/account')).status).toBe(303);
    expect((await owner.client.get('/account')).status).toBe(200);
  });
});

describe('TOTP codes', () => {
  it('work once: the same code is refused at the next sign-in and at a step-up form', async () => {
    const owner = await signUpWithMfa(app());
    const first = new PageClient(app());
    await first.submit('/sign-in', '/sign-in', { email: owner.email, password: owner.password });
    // A fresh step for this test (the enrolment used the current one), then that code twice.
    await pool().query(sql.typeAlias('void')`UPDATE users SET totp_last_step = NULL WHERE email = ${owner.email}`);
    const code = await generate({ secret: owner.secret });
    expect((await first.submit('/sign-in/code', '/sign-in/code', { code })).status).toBe(303);
    const second = new PageClient(app());
    await second.submit('/sign-in', '/sign-in', { email: owner.email, password: owner.password });
    expect((await second.submit('/sign-in/code', '/sign-in/code', { code })).status).toBe(401);
    const invite = await first.submit('/members', '/members/invite', { email: uniqueEmail(), role: 'viewer', code });
    expect(invite.status).toBe(400);
    expect(invite.html).toContain('Each code works once');
  });
});

describe('code checks on role changes', () => {
  it('count toward the lockout: five wrong codes lock the account and the right code is refused', async () => {
    const owner = await signUpWithMfa(app());
    const customerId = await customerOf(owner.email);
    const dev = await memberWithRole(app(), pool(), suite.fixture.box, customerId, 'developer');
    for (let i = 0; i < 4; i++) expect((await owner.client.submit('/members', `/members/${dev.userId}/role`, { role: 'viewer', code: '000000' })).status).toBe(403);
    expect((await owner.client.submit('/members', `/members/${dev.userId}/role`, { role: 'viewer', code: '000000' })).status).toBe(429);
    expect((await userRow(owner.email)).locked_until).not.toBeNull();
    expect((await owner.client.submit('/members', `/members/${dev.userId}/role`, { role: 'viewer', code: await totpNow(owner.secret) })).status).toBe(429);
  });

  it('are rate-limited per user', async () => {
    const limited = await suite.fixture.build({ dashboard: { signInPerMinute: 3, lockoutAfter: 100 } });
    try {
      const owner = await signUpWithMfa(limited);
      const customerId = await customerOf(owner.email);
      const dev = await memberWithRole(limited, pool(), suite.fixture.box, customerId, 'developer');
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++) statuses.push((await owner.client.submit('/members', `/members/${dev.userId}/role`, { role: 'viewer', code: '000000' })).status);
      expect(statuses).toContain(429);
    } finally {
      await limited.close();
    }
  });
});

describe('sensitive changes', () => {
  it('inviting a member asks for a code again', async () => {
    const owner = await signUpWithMfa(app());
    const noCode = await owner.client.submit('/members', '/members/invite', { email: uniqueEmail(), role: 'viewer' });
    expect(noCode.status).toBe(400);
    expect(textOf(noCode.html, 'invite-link')).toBeNull();
    const withCode = await owner.client.submit('/members', '/members/invite', { email: uniqueEmail(), role: 'viewer', code: await totpNow(owner.secret) });
    expect(textOf(withCode.html, 'invite-link')).toMatch(/\/invites\//);
  });

  it('a developer without two-factor authentication is sent to set it up before creating a PBX integration', async () => {
    const account = await suite.fixture.account();
    const email = uniqueEmail();
    const userId = await createUser(pool(), email, await hashPassword('a long enough test password'), { verified: true });
    await addMembership(pool(), userId, account.customer_id, 'developer');
    const dev = new PageClient(app());
    expect((await dev.submit('/sign-in', '/sign-in', { email, password: 'a long enough test password' })).status).toBe(303);
    const refused = await dev.submit('/integrations/pbx', '/integrations/pbx', { instance_id: account.instance_id, rate_per_minute: '10' });
    expect(refused.status).toBe(403);
    expect(refused.html).toContain('Set up two-factor authentication');
    const count = await pool().oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM pbx_integrations WHERE customer_id = ${account.customer_id}`);
    const owner = await memberWithRole(app(), pool(), suite.fixture.box, account.customer_id, 'owner');
    expect((await owner.client.submit('/integrations/pbx', '/integrations/pbx', { instance_id: account.instance_id, rate_per_minute: '10' })).status).toBe(400);
    expect(await pool().oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM pbx_integrations WHERE customer_id = ${account.customer_id}`)).toBe(count);
  });
});

describe('lockout', () => {
  it('counts parallel guesses before checking them: past the limit none is checked or counted', async () => {
    const { email } = await signUpWithMfa(app());
    const guesses = await Promise.all(Array.from({ length: 10 }, (_, i) => new PageClient(app()).submit('/sign-in', '/sign-in', { email, password: `wrong guess ${i}` })));
    expect(guesses.every((g) => g.status === 401)).toBe(true);
    const row = await userRow(email);
    expect(row.failed_sign_ins).toBe(5);
    expect(row.locked_until).not.toBeNull();
  });

  it('starts counting again once a lock has expired', async () => {
    const { email, password } = await signUpWithMfa(app());
    const client = new PageClient(app());
    for (let i = 0; i < 5; i++) await client.submit('/sign-in', '/sign-in', { email, password: `wrong ${i}` });
    await pool().query(sql.typeAlias('void')`UPDATE users SET locked_until = now() - interval '1 second' WHERE email = ${email}`);
    expect((await client.submit('/sign-in', '/sign-in', { email, password: 'one more wrong' })).status).toBe(401);
    expect((await client.submit('/sign-in', '/sign-in', { email, password })).status).toBe(303);
  });

  it('answers a locked account exactly as an unknown address', async () => {
    const { email } = await signUpWithMfa(app());
    const unknown = uniqueEmail();
    const answers = async (address: string) => {
      const client = new PageClient(app());
      let last = await client.submit('/sign-in', '/sign-in', { email: address, password: 'wrong password here' });
      for (let i = 0; i < 5; i++) last = await client.submit('/sign-in', '/sign-in', { email: address, password: 'wrong password here' });
      return { status: last.status, error: /<p class="error"[^>]*>([^<]*)</.exec(last.html)?.[1] };
    };
    const locked = await answers(email);
    expect(locked).toEqual(await answers(unknown));
    expect(locked.status).toBe(401);
  });
});

describe('client addresses', () => {
  const tries = async (instance: Awaited<ReturnType<typeof suite.fixture.build>>) => {
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) {
      const response = await instance.inject({ method: 'POST', url: '/sign-in', payload: 'email=a%40b.test&password=x', headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': `203.0.113.${i + 1}` } });
      statuses.push(response.statusCode);
    }
    return statuses;
  };

  it('ignore X-Forwarded-For by default, and take it from a configured proxy range', async () => {
    const plain = await suite.fixture.build({ dashboard: { signInPerMinute: 2 } });
    const proxied = await suite.fixture.build({ dashboard: { signInPerMinute: 2 }, trustedProxies: ['127.0.0.0/8'] });
    try {
      expect(await tries(plain)).toContain(429);
      expect(await tries(proxied)).not.toContain(429);
    } finally {
      await plain.close();
      await proxied.close();
    }
  });
});

describe('recovery codes', () => {
  it('carry 120 bits now, and codes of the old format still work once', async () => {
    expect(newRecoveryCodes()[0]).toMatch(/^[a-z2-7]{4}(-[a-z2-7]{4}){5}$/);
    const { email, password } = await signUpWithMfa(app());
    const { id } = await userRow(email);
    await pool().query(sql.typeAlias('void')`INSERT INTO recovery_codes (user_id, code_hash) VALUES (${id}, ${sql.binary(hashSecret('abcde-12345'))})`);
    const client = new PageClient(app());
    await client.submit('/sign-in', '/sign-in', { email, password });
    expect((await client.submit('/sign-in/code', '/sign-in/code', { code: 'abcde-12345' })).status).toBe(303);
  });
});

describe('the security log', () => {
  it('has a line for failures, lockouts, sign-ins and refusals, without the password', async () => {
    const lines: string[] = [];
    const sink = new Writable({ write: (chunk, _encoding, done) => { lines.push(String(chunk)); done(); } });
    const logged = await suite.fixture.build({ logger: pino({ level: 'info' }, sink) });
    try {
      const { email, password, client } = await signUpWithMfa(logged);
      for (let i = 0; i < 5; i++) await new PageClient(logged).submit('/sign-in', '/sign-in', { email, password: `bad password ${i}` });
      await client.submit('/account', '/account/sign-out-everywhere', {}, { csrf: 'not a token' });
      const events = lines.map((l) => JSON.parse(l) as { security?: boolean; event?: string }).filter((l) => l.security).map((l) => l.event);
      expect(events).toEqual(expect.arrayContaining(['second_factor.enrolled', 'sign_in.failed', 'account.locked_out', 'request.refused']));
      const all = lines.join('');
      expect(all).not.toContain(password);
      expect(all).not.toContain('bad password');
    } finally {
      await logged.close();
    }
  });
});

describe('the TOTP secret at rest', () => {
  it('is sealed bound to its user: copied into another user\'s row it does not open; one sealed before the binding still signs in', async () => {
    const box = suite.fixture.box;
    const owner = await signUpWithMfa(app());
    const row = await userRow(owner.email);
    expect(box.open(row.totp_secret_enc!, SEAL_USES.totpSecret(row.id))).toBe(owner.secret);

    const other = await userRow((await signUpWithMfa(app())).email);
    await expect(secondFactorMatches(pool(), box, { id: other.id, totp_secret_enc: row.totp_secret_enc }, await totpNow(owner.secret))).rejects.toThrow(/for this use/);

    // As sealed before the column was bound (v3, no use): it opens, and the user signs in with it.
    await pool().query(sql.typeAlias('void')`UPDATE users SET totp_secret_enc = ${box.seal(owner.secret)} WHERE id = ${row.id}`);
    await signedIn(owner.email, owner.password, owner.secret);
  });
});
