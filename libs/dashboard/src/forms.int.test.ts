import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useApiFixture, type TestAccount } from '../../../test/support/api/api-fixture.ts';
import type { GuardedRoute } from './sessions/guards.ts';
import { memberWithRole, type TestMember } from '../../../test/support/dashboard/members.ts';
import { field } from '../../../test/support/dashboard/page-client.ts';
import { FORM_FIELD_MAX } from './forms.ts';

// Every dashboard form, as a scanner sends it: a NUL character, an unpaired surrogate and an
// over-long value in every field any page has. The routes are the app's own list (a new form is
// covered without touching this file); the field names are read from the views.
const suite = useApiFixture();
const routes: GuardedRoute[] = [];
let app: FastifyInstance;
let account: TestAccount;
let owner: TestMember;

const VIEWS = fileURLToPath(new URL('./', import.meta.url));
const FIELD_NAMES = [...new Set(readdirSync(VIEWS, { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.eta')).flatMap((file) => [...readFileSync(`${VIEWS}${file}`, 'utf8').matchAll(/name="([a-z_]+)"/g)].map((m) => m[1]!)))].filter((n) => n !== '_csrf');

beforeAll(async () => {
  app = await suite.fixture.build({ dashboardRoutes: routes, dashboard: { signInPerMinute: 100_000, lockoutAfter: 100_000 } });
  account = await suite.fixture.account();
  owner = await memberWithRole(app, suite.fixture.runtime.pool, suite.fixture.box, account.customer_id, 'owner');
}, 60_000);
afterAll(async () => {
  await app?.close();
});

const urlOf = (route: string) => route.replace(/:id\b/, account.instance_id).replace(/:[A-Za-z]+/g, '1');

async function post(url: string, body: string | Record<string, string>): Promise<number> {
  const csrf = field((await owner.client.get('/account')).html, '_csrf') ?? '';
  const cookie = [...owner.client.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  // A JSON body is parsed in the dashboard's scope too (fastify's own parser): a lone surrogate arrives whole that way.
  const json = typeof body !== 'string';
  const payload = json ? JSON.stringify({ _csrf: csrf, ...body }) : `_csrf=${encodeURIComponent(csrf)}&${body}`;
  const response = await app.inject({ method: 'POST', url, payload, headers: { 'content-type': json ? 'application/json' : 'application/x-www-form-urlencoded', accept: 'text/html', cookie } });
  return response.statusCode;
}

const everyField = (value: string) => FIELD_NAMES.map((name) => `${name}=${value}`).join('&');

describe('every dashboard form', () => {
  it('answers a NUL character, an unpaired surrogate or an over-long value with a 4xx page, never a 5xx', async () => {
    const posts = routes.filter((r) => r.method === 'POST');
    expect(posts.length).toBeGreaterThan(20);
    expect(FIELD_NAMES).toEqual(expect.arrayContaining(['instance_id', 'email', 'code', 'url', 'text']));
    const failures: string[] = [];
    for (const route of posts) {
      const url = urlOf(route.url);
      const bodies = {
        nul: everyField('x%00y'),
        surrogate: everyField('%ED%A0%80'),
        overLong: ['instance_id', 'text', 'url', 'name', 'reason'].map((n) => `${n}=${'a'.repeat(FORM_FIELD_MAX + 1)}`).join('&'),
        nulInPath: everyField('ok'),
        jsonSurrogate: Object.fromEntries(FIELD_NAMES.map((name) => [name, 'a\uD800b'])),
        jsonNul: Object.fromEntries(FIELD_NAMES.map((name) => [name, 'a\u0000b'])),
      };
      for (const [kind, body] of Object.entries(bodies)) {
        const target = kind === 'nulInPath' ? url.replace(/\/1(\/|$)/, '/%00$1').replace(account.instance_id, '%00') : url;
        const status = await post(target, body);
        if (status >= 500) failures.push(`${route.url} (${kind}): ${status}`);
      }
    }
    expect(failures).toEqual([]);
  }, 120_000);

  it('says which field was refused', async () => {
    const status = await post('/integrations/pbx', `instance_id=${account.instance_id}%00&rate_per_minute=10`);
    expect(status).toBe(400);
    const csrf = field((await owner.client.get('/account')).html, '_csrf') ?? '';
    const cookie = [...owner.client.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    const page = await app.inject({ method: 'POST', url: '/integrations/pbx', payload: `_csrf=${csrf}&instance_id=a%00b`, headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html', cookie } });
    expect(page.body).toContain('instance_id');
    expect(page.body).toContain('NUL');
  });
});
