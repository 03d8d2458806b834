import { Writable } from 'node:stream';
import { beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import { sql, z } from '@gw/db';
import { until, useApiFixture, type TestAccount } from '../../../../test/support/api/api-fixture.ts';
import { accepted } from '../../../../test/support/api/fake-replies.ts';
import { memberWithRole, type TestMember } from '../../../../test/support/dashboard/members.ts';
import { field, signUpWithMfa, textOf, totpNow, type PageClient } from '../../../../test/support/dashboard/page-client.ts';

// API keys in the dashboard: shown once, created with a code again, revoked for good, each
// customer's own; and the key's use noted by the send path without slowing it.
const suite = useApiFixture();
const app = () => suite.fixture.app;
const pool = () => suite.fixture.runtime.pool;
let account: TestAccount;
let owner: TestMember;

beforeAll(async () => {
  account = await suite.fixture.account();
  owner = await memberWithRole(app(), pool(), suite.fixture.box, account.customer_id, 'owner');
}, 120_000);

const keyName = () => `system-${Math.random().toString(36).slice(2, 8)}`;

async function createKey(who: { client: PageClient; secret: string }, name = keyName()) {
  const page = await who.client.submit('/api-keys', '/api-keys', { name, code: await totpNow(who.secret) });
  expect(page.status, page.html).toBe(200);
  const apiKey = textOf(page.html, 'new-api-key')!;
  expect(apiKey).toMatch(/^gw_[0-9a-f]{16}_/);
  return { page, name, apiKey, keyId: apiKey.split('_')[1]! };
}

/** The key's secret: everything after `gw_<id>_` (base64url, so it may hold, or start with, `_` itself). */
const secretOf = (apiKey: string) => apiKey.split('_').slice(2).join('_');

async function sendWith(apiKey: string, target = suite.fixture.app) {
  suite.fixture.replies.answerWith(accepted);
  const response = await target.inject({
    method: 'POST',
    url: '/api/send-message',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    payload: JSON.stringify({ instance_id: account.instance_id, phone: '+14155550142', message: 'Your order 1234 has shipped.', message_purpose: 'transactional' }),
  });
  return { status: response.statusCode, body: response.json() as { error?: string } };
}

/** The list's row of a key. */
const rowOf = (html: string, keyId: string) => new RegExp(`<tr data-key-id="${keyId}">[\\s\\S]*?</tr>`).exec(html)?.[0] ?? '';

const LastUsed = z.object({ last_used_at: z.date().nullable() });
const lastUsedAt = (keyId: string) => pool().oneFirst(sql.type(LastUsed)`SELECT last_used_at FROM api_keys WHERE id = ${keyId}`);

describe('creating an API key', () => {
  it('shows the key once, in a secret box with a copy button; the list names it but never shows it again', async () => {
    const { page, name, apiKey, keyId } = await createKey(owner);
    expect(page.html).toMatch(/<section class="card secret" id="created-key"/);
    expect(page.html).toContain('data-copy-target="new-api-key"');
    expect(page.html).toContain('<script src="/assets/copy.js" defer></script>');
    expect(page.response.headers['cache-control']).toBe('no-store');

    const list = await owner.client.get('/api-keys');
    expect(list.status).toBe(200);
    expect(list.html).not.toContain(apiKey);
    expect(list.html).not.toContain(secretOf(apiKey));
    expect(list.html).not.toContain('id="created-key"');
    expect(rowOf(list.html, keyId)).toContain(`<span class="key-name">${name}</span>`);

    const audit = await suite.fixture.record((r) => r.event.type === 'AccountChanged' && r.event.payload.action === 'api_key.created' && r.event.payload.subject_id === keyId, 'api_key.created');
    expect(audit.event.payload).toMatchObject({ customer_id: account.customer_id, by: owner.email, via: 'dashboard' });
    expect(JSON.stringify(audit.event.payload)).not.toContain(secretOf(apiKey));

    // The copy script is served, and the key works.
    expect((await app().inject({ method: 'GET', url: '/assets/copy.js' })).statusCode).toBe(200);
    expect((await sendWith(apiKey)).status).toBe(200);
  });

  it('asks for a current code again: without one, or with a wrong one, the form comes back (400) saying so, and no key is made', async () => {
    const count = () => pool().oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM api_keys WHERE customer_id = ${account.customer_id}`);
    const before = await count();
    for (const code of ['', '000000', 'not-a-code']) {
      const page = await owner.client.submit('/api-keys', '/api-keys', { name: 'ci', code });
      expect(page.status).toBe(400);
      expect(page.html).toContain('Enter the current 6-digit code');
      expect(field(page.html, 'name')).toBe('ci');
      expect(page.html).not.toMatch(/gw_[0-9a-f]{16}_/);
    }
    expect(await count()).toBe(before);
    const nameless = await owner.client.submit('/api-keys', '/api-keys', { name: '  ', code: await totpNow(owner.secret) });
    expect(nameless.status).toBe(400);
    expect(nameless.html).toContain('Give the key a name');
    expect(await count()).toBe(before);
  });
});

describe('last used', () => {
  it('is set by the send path when the key authenticates, and shown in the list', async () => {
    const { apiKey, keyId } = await createKey(owner);
    expect(await lastUsedAt(keyId)).toBeNull();
    expect(rowOf((await owner.client.get('/api-keys')).html, keyId)).toContain('<span class="hint">Never used</span>');
    expect((await sendWith(apiKey)).status).toBe(200);
    await until(async () => (await lastUsedAt(keyId)) !== null, 5_000, 'last_used_at');
    const used = (await lastUsedAt(keyId))!;
    expect(Date.now() - used.getTime()).toBeLessThan(60_000);
    expect(rowOf((await owner.client.get('/api-keys')).html, keyId)).toContain(`${used.toISOString().slice(0, 10)} ${used.toISOString().slice(11, 16)} UTC`);
    // Within the minute, more sends write nothing more.
    expect((await sendWith(apiKey)).status).toBe(200);
    await new Promise((r) => setTimeout(r, 200));
    expect((await lastUsedAt(keyId))!.getTime()).toBe(used.getTime());
  });
});

describe('revoking an API key', () => {
  it('takes effect at once: the key then gets 401 at POST /api/send-message', async () => {
    const { apiKey, keyId } = await createKey(owner);
    expect((await sendWith(apiKey)).status).toBe(200);
    const revoked = await owner.client.submit('/api-keys', `/api-keys/${keyId}/revoke`, {});
    expect(revoked.status).toBe(303);
    expect(revoked.location).toBe('/api-keys?done=revoked');
    const refused = await sendWith(apiKey);
    expect(refused).toMatchObject({ status: 401, body: { error: 'revoked_api_key' } });
    const list = await owner.client.get('/api-keys?done=revoked');
    expect(list.html).toContain('The key was revoked');
    expect(rowOf(list.html, keyId)).toMatch(/Revoked \d{4}-\d{2}-\d{2}/);
    expect(rowOf(list.html, keyId)).not.toContain('/revoke"');
    await suite.fixture.record((r) => r.event.type === 'AccountChanged' && r.event.payload.action === 'api_key.revoked' && r.event.payload.subject_id === keyId, 'api_key.revoked');
  });
});

describe('who may', () => {
  it('a viewer sees the list, without forms, and gets 403 on create and revoke', async () => {
    const { apiKey, keyId } = await createKey(owner);
    const viewer = await memberWithRole(app(), pool(), suite.fixture.box, account.customer_id, 'viewer');
    const list = await viewer.client.get('/api-keys');
    expect(list.status).toBe(200);
    expect(list.html).toContain(`data-key-id="${keyId}"`);
    expect(list.html).not.toContain('action="/api-keys"');
    expect(list.html).not.toContain('/revoke"');
    const csrf = field((await viewer.client.get('/account')).html, '_csrf')!;
    expect((await viewer.client.post('/api-keys', { _csrf: csrf, name: 'mine', code: await totpNow(viewer.secret) })).status).toBe(403);
    expect((await viewer.client.post(`/api-keys/${keyId}/revoke`, { _csrf: csrf })).status).toBe(403);
    expect((await sendWith(apiKey)).status).toBe(200);
  });

  it("another customer cannot see or revoke the key (404, as for a key that does not exist)", async () => {
    const { apiKey, keyId } = await createKey(owner);
    const stranger = await signUpWithMfa(app());
    const theirList = await stranger.client.get('/api-keys');
    expect(theirList.html).not.toContain(keyId);
    expect(theirList.html).toContain('No API keys yet');
    const refused = await stranger.client.submit('/api-keys', `/api-keys/${keyId}/revoke`, {});
    expect(refused.status).toBe(404);
    expect(refused.html).toContain('No such API key');
    expect((await stranger.client.submit('/api-keys', '/api-keys/0000000000000000/revoke', {})).status).toBe(404);
    expect((await sendWith(apiKey)).status).toBe(200);
    expect(rowOf((await owner.client.get('/api-keys')).html, keyId)).toContain('Active');
  });
});

describe('logs', () => {
  it('never hold the key, whatever happens to it', async () => {
    const lines: string[] = [];
    const sink = new Writable({ write: (chunk, _encoding, done) => { lines.push(String(chunk)); done(); } });
    // No redaction at all here: nothing may even try to log the key.
    const logged = await suite.fixture.build({ logger: pino({ level: 'trace' }, sink) });
    try {
      const member = await memberWithRole(logged, pool(), suite.fixture.box, account.customer_id, 'developer');
      const { apiKey, keyId } = await createKey(member);
      expect((await sendWith(apiKey, logged)).status).toBe(200);
      expect((await sendWith(`gw_${keyId}_wrongsecretwrongsecretwrongsecret`, logged)).status).toBe(401);
      expect((await member.client.submit('/api-keys', `/api-keys/${keyId}/revoke`, {})).status).toBe(303);
      expect((await sendWith(apiKey, logged)).status).toBe(401);
      await member.client.submit('/api-keys', '/api-keys', { name: 'again', code: 'wrong' });
      expect(lines.some((line) => line.includes('"correlation_id"'))).toBe(true);
      const all = lines.join('');
      expect(all).not.toContain(apiKey);
      expect(all).not.toContain(secretOf(apiKey));
      expect(all).not.toMatch(/gw_[0-9a-f]{16}_[A-Za-z0-9_-]{8,}/);
    } finally {
      await logged.close();
    }
  });
});
