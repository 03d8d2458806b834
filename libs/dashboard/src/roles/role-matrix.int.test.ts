import { beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { useApiFixture } from '../../../../test/support/api/api-fixture.ts';
import type { GuardedRoute } from '../sessions/guards.ts';
import { field } from '../../../../test/support/dashboard/page-client.ts';
import { memberWithRole, type TestMember } from '../../../../test/support/dashboard/members.ts';
import { can, ROLES, type Role } from './permissions.ts';

// Every dashboard route, tried by a member of every role: refused (403) exactly where the matrix
// (permissions.ts, shown in docs/dashboard.md) says no. Ids in paths name nothing, so an allowed
// request goes past the guard and stops at the handler's own checks (a 404 or a 400), and no
// request changes anything.
const PUBLIC = new Set(['/', '/sign-up', '/sign-in', '/sign-in/code', '/sign-out', '/acceptable-use', '/docs/responsible-messaging', '/invites/:token', '/invites/:token/accept', '/forgot-password', '/reset-password/:token']);
/** What an account whose address is not proved yet may use (besides the public pages). */
const VERIFICATION = new Set(['/verify-email', '/verify-email/resend', '/verify-email/:token']);
const OWN_ACCOUNT = new Set(['/account', '/account/mfa', '/account/password', '/account/sessions/:ref/end', '/account/sign-out-everywhere']);

const suite = useApiFixture();
const routes: GuardedRoute[] = [];
let app: FastifyInstance;
const members = new Map<Role, TestMember>();
let unverified: TestMember;

beforeAll(async () => {
  app = await suite.fixture.build({ dashboardRoutes: routes });
  const account = await suite.fixture.account();
  for (const role of ROLES) members.set(role, await memberWithRole(app, suite.fixture.runtime.pool, suite.fixture.box, account.customer_id, role));
  // An owner (MFA on) whose address is not proved yet, as an invitation's account is until its link is followed.
  unverified = await memberWithRole(app, suite.fixture.runtime.pool, suite.fixture.box, account.customer_id, 'owner', { verified: false });
}, 120_000);

const concrete = (url: string) => url.replace(/:(\w+)/g, (_, name: string) => (name === 'id' ? 'ins_000000000000000000000000' : `no-such-${name}`));

describe('the role matrix', () => {
  it('covers every dashboard route: each is public, the user\'s own account, or guarded by a permission', () => {
    expect(routes.length).toBeGreaterThan(10);
    const unguarded = routes.filter((r) => r.permission === null && !PUBLIC.has(r.url) && !VERIFICATION.has(r.url) && !OWN_ACCOUNT.has(r.url));
    expect(unguarded).toEqual([]);
  });

  it('refuses each role exactly what the matrix denies it', async () => {
    const outcomes: string[] = [];
    for (const route of routes.filter((r) => r.permission !== null)) {
      for (const role of ROLES) {
        const { client } = members.get(role)!;
        const url = concrete(route.url);
        const page = route.method === 'GET' ? await client.get(url) : await client.post(url, { _csrf: field((await client.get('/account')).html, '_csrf')! });
        const allowed = can(role, route.permission!);
        if (allowed ? page.status === 403 || page.status >= 500 : page.status !== 403) outcomes.push(`${route.method} ${route.url} as ${role}: ${page.status} (${allowed ? 'allowed' : 'denied'} by the matrix)`);
      }
    }
    expect(outcomes).toEqual([]);
  });

  it('lets an account whose address is not proved reach nothing but the verification: every page goes to "check your inbox", every form is refused', async () => {
    const { client } = unverified;
    const csrf = field((await client.get('/verify-email')).html, '_csrf')!;
    expect(csrf).toBeTruthy();
    const outcomes: string[] = [];
    for (const route of routes.filter((r) => !PUBLIC.has(r.url) && !VERIFICATION.has(r.url))) {
      const url = concrete(route.url);
      const page = route.method === 'GET' ? await client.get(url) : await client.post(url, { _csrf: csrf });
      const gated = route.method === 'GET' ? page.status === 303 && page.location === '/verify-email' : page.status === 403 && page.html.includes('Confirm your email first');
      if (!gated) outcomes.push(`${route.method} ${route.url}: ${page.status} ${page.location ?? ''}`);
    }
    expect(outcomes).toEqual([]);
  });
});
