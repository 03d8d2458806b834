import { beforeAll, describe, expect, it } from 'vitest';
import { sql, z } from '@gw/db';
import { useApiFixture } from '../../../../test/support/api/api-fixture.ts';
import { PageClient, signUpWithMfa, textOf, totpNow, verifyEmail } from '../../../../test/support/dashboard/page-client.ts';
import { memberWithRole } from '../../../../test/support/dashboard/members.ts';

// Invitations by link, role changes (with a code again) and their effect on sessions.
const suite = useApiFixture();
const app = () => suite.fixture.app;
const pool = () => suite.fixture.runtime.pool;
let owner: Awaited<ReturnType<typeof signUpWithMfa>>;
let customerId: string;

beforeAll(async () => {
  owner = await signUpWithMfa(app());
  customerId = await pool().oneFirst(sql.type(z.object({ customer_id: z.string() }))`
    SELECT m.customer_id FROM memberships m JOIN users u ON u.id = m.user_id WHERE u.email = ${owner.email}`);
}, 60_000);

const userIdOf = (email: string) => pool().oneFirst(sql.type(z.object({ id: z.string() }))`SELECT id FROM users WHERE email = ${email}`);

describe('invitations', () => {
  it('give a link shown once; the invited person creates an account and joins with the invited role', async () => {
    const email = `dev-${Math.random().toString(36).slice(2)}@example.test`;
    const invited = await owner.client.submit('/members', '/members/invite', { email, role: 'developer', code: await totpNow(owner.secret) });
    expect(invited.status).toBe(200);
    const link = textOf(invited.html, 'invite-link')!;
    expect(link).toMatch(/^https:\/\/gateway\.test\/invites\/[A-Za-z0-9_-]{43}$/);
    expect((await owner.client.get('/members')).html).not.toContain(link);
    const path = new URL(link).pathname;

    const newcomer = new PageClient(app());
    expect((await newcomer.get(path)).html).toContain('as <strong>developer</strong>');
    const joined = await newcomer.submit(path, `${path}/accept`, { password: 'a good long password' });
    expect(joined.location).toBe('/account/mfa');
    // The link was shown to the inviter too: the new account proves its address from the mail first.
    expect((await newcomer.get('/account')).location).toBe('/verify-email');
    await verifyEmail(newcomer, email);
    expect((await newcomer.get('/account')).html).toContain('developer');
    expect((await new PageClient(app()).get(path)).status).toBe(404);
    const audit = await suite.fixture.record((r) => r.event.type === 'AccountChanged' && r.event.payload.action === 'member.joined' && r.event.payload.by === email, 'member.joined');
    expect(audit.event.payload.customer_id).toBe(customerId);
  });

  it('are made by owners and admins only', async () => {
    const viewer = await memberWithRole(app(), pool(), suite.fixture.box, customerId, 'viewer');
    expect((await viewer.client.submit('/members', '/members/invite', { email: 'x@example.test', role: 'admin' })).status).toBe(403);
  });
});

describe('role changes', () => {
  it('ask for a code again, take effect at once, and end the member\'s sessions', async () => {
    const dev = await memberWithRole(app(), pool(), suite.fixture.box, customerId, 'developer');
    const userId = await userIdOf(dev.email);
    const noCode = await owner.client.submit('/members', `/members/${userId}/role`, { role: 'viewer', code: '' });
    expect(noCode.status).toBe(403);
    const changed = await owner.client.submit('/members', `/members/${userId}/role`, { role: 'viewer', code: await totpNow(owner.secret) });
    expect(changed.status).toBe(303);
    expect((await dev.client.get('/account')).status).toBe(303);
    expect(await pool().oneFirst(sql.type(z.object({ role: z.string() }))`SELECT role FROM memberships WHERE user_id = ${userId}`)).toBe('viewer');
  });

  it('leave owners to owners, and the last owner in place', async () => {
    const admin = await memberWithRole(app(), pool(), suite.fixture.box, customerId, 'admin');
    const ownerId = await userIdOf(owner.email);
    expect((await admin.client.submit('/members', `/members/${ownerId}/role`, { role: 'viewer', code: await totpNow(admin.secret) })).status).toBe(403);
    const adminId = await userIdOf(admin.email);
    expect((await admin.client.submit('/members', `/members/${adminId}/role`, { role: 'owner', code: await totpNow(admin.secret) })).status).toBe(403);
    const last = await owner.client.submit('/members', `/members/${ownerId}/role`, { role: 'admin', code: await totpNow(owner.secret) });
    expect(last.status).toBe(400);
    expect(last.html).toContain('at least one owner');
  });

  it('of another customer\'s member answer 404', async () => {
    const stranger = await signUpWithMfa(app());
    const strangerId = await userIdOf(stranger.email);
    expect((await owner.client.submit('/members', `/members/${strangerId}/role`, { role: 'viewer', code: await totpNow(owner.secret) })).status).toBe(404);
    expect((await owner.client.submit('/members', `/members/${strangerId}/remove`, {})).status).toBe(404);
  });
});
